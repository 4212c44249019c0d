'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { waitForLines, parseCombined, holdsOpen, waitUntil } = require('../helpers/access-log')
const { requireTools } = require('../helpers/tools')

const SHIPPED = path.resolve(__dirname, '..', '..', 'packaging', 'logrotate', 'svr')

function run (file, args) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 20000 }, (err, stdout, stderr) => resolve({ err, stdout, stderr }))
  })
}

/**
 * The shipped file, pointed at a test directory: the same directives, with
 * the service's user and signal replaced by this process's own.
 */
function adapt (text, logs, pid) {
  const user = os.userInfo()
  const group = String(user.gid)
  return text
    .replaceAll('/var/log/svr', logs)
    .replace(/^\tsu svr adm$/m, '\tsu ' + user.username + ' ' + group)
    .replace(/^\tcreate 0640 svr adm$/m, '\tcreate 0640 ' + user.username + ' ' + group)
    .replace(/postrotate\n[\s\S]*?\n\tendscript/, 'postrotate\n\t\tkill -USR1 ' + pid + '\n\tendscript')
}

describe('packaging/logrotate/svr', () => {
  it('should rotate both logs with the shipped directives and have svr reopen them', async (t) => {
    if (!requireTools(t, 'logrotate')) return
    const shipped = await fs.readFile(SHIPPED, 'utf8')
    assert.doesNotMatch(shipped, /^\s*copytruncate/m)
    assert.match(shipped, /systemctl kill --signal=USR1 --kill-whom=main svr/)
    assert.match(shipped, /\/run\/svr\/svr\.pid/)

    const site = await makeSite(t, { workers: 2, logDirectory: 'logs' })
    const svr = await startSvr(t, site.configFile)
    const logs = path.join(site.dir, 'logs')
    // logrotate refuses a directory writable by others than the su user.
    await fs.chmod(logs, 0o750)
    const first = await request(svr.port, '/?before')
    await waitForLines(path.join(logs, 'access.log'), 1)

    const conf = path.join(site.dir, 'logrotate.conf')
    await fs.writeFile(conf, adapt(shipped, logs, svr.child.pid))
    const rotated = await run('logrotate', ['--force', '--state', path.join(site.dir, 'logrotate.state'), conf])
    assert.equal(rotated.err, null, rotated.stderr)
    const pids = [svr.child.pid, ...svr.workerPids().values()]
    await waitUntil(async () => !(await holdsOpen(pids, path.join(logs, 'access.log.1'))), 'access.log.1 is still open')

    const second = await request(svr.port, '/?after')
    const newLines = await waitForLines(path.join(logs, 'access.log'), 1)
    const oldLines = await waitForLines(path.join(logs, 'access.log.1'), 1)
    assert.deepEqual(newLines.map((line) => parseCombined(line).requestId), [second.headers['x-request-id']])
    assert.deepEqual(oldLines.map((line) => parseCombined(line).requestId), [first.headers['x-request-id']])
    await fs.access(path.join(logs, 'error.log.1'))
    await fs.access(path.join(logs, 'error.log'))
  })
})
