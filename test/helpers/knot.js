'use strict'

const { spawn } = require('node:child_process')
const crypto = require('node:crypto')
const dns = require('node:dns')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { removeDir } = require('./server')
const { freePort, which } = require('./tools')

const KEY_NAME = 'svr-acme.'
const START_TIMEOUT_MS = 10000

/**
 * Knot DNS, an authoritative server, on a loopback port of its own, serving
 * `zone` and accepting dynamic updates (RFC 2136) signed with a TSIG key:
 * the DNS that dns-01 puts its records in and Pebble validates against.
 * Stopped after the test.
 * @param {object} t node:test context
 * @param {string} zone e.g. "example.test"
 * @returns {Promise<{port: number, server: string, keyFile: string, txt: (name: string) => Promise<string[]>, output: () => string}>}
 *   keyFile: the key in the format tsig-keygen writes (acme.dns.tsigKeyFile)
 */
async function startKnot (t, zone) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-knot-'))
  t.after(() => removeDir(dir))
  const port = await freePort()
  const secret = crypto.randomBytes(32).toString('base64')
  await fs.writeFile(path.join(dir, zone + '.zone'), [
    '$ORIGIN ' + zone + '.',
    '$TTL 60',
    '@ SOA ns1 hostmaster 1 60 60 3600 60',
    '@ NS ns1',
    'ns1 A 127.0.0.1',
    ''
  ].join('\n'))
  await fs.writeFile(path.join(dir, 'knot.conf'), [
    'server:',
    '  listen: 127.0.0.1@' + port,
    '  rundir: ' + dir,
    'log:',
    '  - target: stderr',
    '    any: info',
    'database:',
    '  storage: ' + dir,
    'control:',
    '  listen: ' + path.join(dir, 'knot.sock'),
    'key:',
    '  - id: ' + KEY_NAME,
    '    algorithm: hmac-sha256',
    '    secret: ' + secret,
    'acl:',
    '  - id: update',
    '    key: ' + KEY_NAME,
    '    action: update',
    'template:',
    '  - id: default',
    '    storage: ' + dir,
    '    zonefile-sync: -1',
    '    journal-content: changes',
    'zone:',
    '  - domain: ' + zone,
    '    file: ' + zone + '.zone',
    '    acl: update',
    ''
  ].join('\n'))
  const keyFile = path.join(dir, 'tsig.key')
  await fs.writeFile(keyFile, 'key "' + KEY_NAME + '" {\n\talgorithm hmac-sha256;\n\tsecret "' + secret + '";\n};\n', { mode: 0o600 })
  let output = ''
  const child = spawn(which('knotd'), ['-c', path.join(dir, 'knot.conf')], { stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  })
  const server = '127.0.0.1:' + port
  const txt = async (name) => {
    const resolver = new dns.promises.Resolver({ timeout: 1000, tries: 1 })
    resolver.setServers([server])
    try {
      return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''))
    } catch (err) {
      if (err.code === 'ENODATA' || err.code === 'ENOTFOUND') return []
      throw err
    }
  }
  // Ready once it answers for the zone.
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    const resolver = new dns.promises.Resolver({ timeout: 500, tries: 1 })
    resolver.setServers([server])
    if (await resolver.resolveSoa(zone).then(() => true, () => false)) break
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('knotd did not start: ' + output)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { port, server, keyFile, txt, output: () => output }
}

module.exports = { startKnot }
