'use strict'

// What the automatic-HTTPS tests share: a secure site on fixed free ports
// with a Pebble validating against them, TLS handshakes and a client loop
// that records the certificates it sees.

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const net = require('node:net')
const path = require('node:path')
const tls = require('node:tls')
const { makeSite } = require('./server')
const { makeCertificate, httpsRequest } = require('./tls')
const { freePorts } = require('./tools')
const { startPebble, acmeSettings } = require('./pebble')
const { issuerKey } = require('../../lib/acme/issuers')

const NAME = 'acme-test.example'
// The programs these tests need (GO_TOOLS of test/helpers/tools.js).
const TOOLS = ['pebble', 'pebble-challtestsrv']
// How long a relay tries to reach an instance for the CA.
const RELAY_WAIT_MS = 10000

/**
 * A secure site on two fixed free ports (Pebble must be told them), its
 * ACME storage under stateDirectory, and a Pebble validating against it.
 * `fleet`: Pebble validates through relays to the first instance that
 * accepts the connection, the site's or a second one's on `secondHttp` and
 * `secondHttps` (as a load balancer in front of both would), not on the
 * site's ports alone.
 */
async function setUp (t, { pebble: pebbleOptions = {}, acme = {}, config = {}, standIn = true, fleet = false } = {}) {
  // Two more for a second instance.
  const [http, https, secondHttp, secondHttps] = await freePorts(4)
  const ports = { http, https, secondHttp, secondHttps }
  const validated = fleet
    ? { httpPort: await relay(t, [http, secondHttp]), tlsPort: await relay(t, [https, secondHttps]) }
    : { httpPort: http, tlsPort: https }
  const pebble = await startPebble(t, { ...validated, ...pebbleOptions })
  const site = await makeSite(t, {}, { 'index.html': 'hello\n' })
  const values = {
    port: '127.0.0.1:' + ports.http,
    sport: '127.0.0.1:' + ports.https,
    secure: true,
    domain: NAME,
    stateDirectory: 'state',
    acme: acmeSettings(pebble, acme),
    ...config
  }
  // The stand-in served for the name until its certificate arrives.
  let standInFingerprint = null
  if (standIn) {
    const { cert, key, fingerprint } = await makeCertificate(site.dir, 'stand-in', ['stand-in.example'])
    Object.assign(values, { cert, key })
    standInFingerprint = fingerprint
  }
  await site.writeConfig(values)
  // storage: what svr keeps for Pebble (its account, certificates and
  // locks), in the folder of the CA under storageRoot (lib/acme/issuers.js).
  const storageRoot = path.join(site.dir, 'state', 'acme')
  return { ports, pebble, site, storageRoot, storage: path.join(storageRoot, issuerKey(pebble.directoryUrl)), standIn: standInFingerprint }
}

/**
 * A TCP relay on a loopback port of its own that passes each connection to
 * the first of `targets` that accepts one: what a load balancer in front of
 * instances that share their ACME storage does for the CA. Closed after
 * the test.
 * @param {object} t node:test context
 * @param {number[]} targets ports on 127.0.0.1, in order of preference
 * @returns {Promise<number>} the relay's port
 */
async function relay (t, targets) {
  const sockets = new Set()
  const track = (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  }
  const server = net.createServer((client) => {
    track(client)
    client.pause()
    client.on('error', () => client.destroy())
    connectFirst(targets, (upstream) => {
      if (upstream === null || client.destroyed) {
        client.destroy()
        if (upstream !== null) upstream.destroy()
        return
      }
      track(upstream)
      upstream.on('error', () => client.destroy())
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
      client.pipe(upstream).pipe(client)
      client.resume()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise((resolve) => {
    server.close(resolve)
    for (const socket of sockets) socket.destroy()
  }))
  return server.address().port
}

// The first of the ports that accepts a connection. An instance's port
// refuses until its first worker listens, which may be after its primary
// ordered: while none accepts, they are tried again (within the CA's 15 s
// validation timeout), then null.
function connectFirst (ports, callback, deadline = Date.now() + RELAY_WAIT_MS, at = 0) {
  if (at === ports.length) {
    if (Date.now() > deadline) return callback(null)
    setTimeout(() => connectFirst(ports, callback, deadline, 0), 100)
    return
  }
  const socket = net.connect(ports[at], '127.0.0.1')
  socket.once('connect', () => {
    socket.removeAllListeners('error')
    callback(socket)
  })
  socket.once('error', () => connectFirst(ports, callback, deadline, at + 1))
}

/**
 * One TLS handshake for a name on a new connection.
 * @returns {Promise<{fingerprint: string, issuer: string, subjectAltName: string}>}
 */
function handshake (port, servername, options = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, ...options }, () => {
      const peer = socket.getPeerCertificate()
      resolve({ fingerprint: peer.fingerprint256, issuer: peer.issuer.CN, subjectAltName: peer.subjectaltname, authorized: socket.authorized, protocol: socket.alpnProtocol })
      socket.end()
    })
    socket.on('error', reject)
  })
}

/**
 * HTTPS requests for the name on new connections until stopped: every
 * failure, and the certificates seen in order.
 */
function tlsLoop (port, servername) {
  const seen = []
  const failures = []
  let running = true
  const done = (async () => {
    while (running) {
      try {
        const res = await httpsRequest(port, '/index.html', { servername, headers: { host: servername } })
        if (res.status !== 200 || res.body !== 'hello\n') failures.push('status ' + res.status)
        if (seen[seen.length - 1] !== res.fingerprint) seen.push(res.fingerprint)
      } catch (err) {
        failures.push(err.code || err.message)
      }
    }
  })()
  return { seen, failures, stop: async () => { running = false; await done } }
}

/**
 * @param {string} storage the folder of one CA in the ACME storage directory
 * @param {string} [name]
 * @returns {Promise<string>} the SHA-256 fingerprint of the stored certificate of the name
 */
async function storedFingerprint (storage, name = NAME) {
  const pem = await fs.readFile(path.join(storage, 'certificates', name, 'cert.pem'), 'utf8')
  return new crypto.X509Certificate(pem).fingerprint256
}

/**
 * Wait until `condition` (sync or async) is true, polling every 100 ms.
 * @param {() => boolean|Promise<boolean>} condition
 * @param {number} [timeout] ms
 */
async function until (condition, timeout = 30000) {
  const deadline = Date.now() + timeout
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met within ' + timeout + ' ms')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

module.exports = { NAME, TOOLS, setUp, handshake, tlsLoop, storedFingerprint, until }
