'use strict'

// The Caddyfile of the bench's Caddy baseline (bench/targets.js), as Caddy
// itself reads it (`caddy adapt`): loopback only, no admin endpoint, no
// automatic HTTPS, /proxy/ cut off and passed on with as many idle
// keep-alive connections as nginx keeps, and an access log file.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { requireTools } = require('../helpers/tools')
const { caddyfile } = require('../../bench/targets')

function adapt (file) {
  return new Promise((resolve, reject) => {
    execFile('caddy', ['adapt', '--config', file, '--adapter', 'caddyfile'], (err, stdout, stderr) => {
      if (err) reject(new Error(stderr || err.message))
      else resolve(JSON.parse(stdout))
    })
  })
}

describe('the bench\'s Caddy baseline', () => {
  it('has the admin endpoint and automatic HTTPS off, listens on loopback and proxies /proxy/ with 64 idle connections', async (t) => {
    if (!requireTools(t, 'caddy')) return
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-caddy-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'Caddyfile')
    const accessLog = path.join(dir, 'access.log')
    await fs.writeFile(file, caddyfile({ port: 18080, webroot: dir, upstreamPort: 18081, accessLog }))
    const config = await adapt(file)
    assert.deepEqual(config.admin, { disabled: true })
    const servers = Object.values(config.apps.http.servers)
    assert.equal(servers.length, 1)
    const [server] = servers
    assert.deepEqual(server.listen, ['127.0.0.1:18080'])
    assert.deepEqual(server.automatic_https, { disable: true })
    const text = JSON.stringify(server.routes)
    assert.match(text, /"strip_path_prefix":"\/proxy"/)
    assert.match(text, /"dial":"127\.0\.0\.1:18081"/)
    assert.match(text, /"max_idle_conns_per_host":64/)
    assert.match(text, /"handler":"file_server"/)
    const logs = Object.values(config.logging.logs).filter((log) => log.writer && log.writer.output === 'file')
    assert.deepEqual(logs.map((log) => [log.writer.filename, log.writer.roll]), [[accessLog, false]])
  })

  it('has no proxy route without an upstream', () => {
    const text = caddyfile({ port: 18080, webroot: '/srv', upstreamPort: null, accessLog: '/tmp/a.log' })
    assert.doesNotMatch(text, /reverse_proxy/)
    assert.match(text, /admin off/)
    assert.match(text, /auto_https off/)
  })
})
