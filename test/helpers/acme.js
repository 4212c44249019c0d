'use strict'

// What the automatic-HTTPS tests share: a secure site on fixed free ports
// with a Pebble validating against them, TLS handshakes and a client loop
// that records the certificates it sees.

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const tls = require('node:tls')
const { makeSite } = require('./server')
const { makeCertificate, httpsRequest } = require('./tls')
const { freePorts } = require('./tools')
const { startPebble, acmeSettings } = require('./pebble')

const NAME = 'acme-test.example'
// The programs these tests need (GO_TOOLS of test/helpers/tools.js).
const TOOLS = ['pebble', 'pebble-challtestsrv']

/**
 * A secure site on two fixed free ports (Pebble must be told them), its
 * ACME storage under stateDirectory, and a Pebble validating against it.
 */
async function setUp (t, { pebble: pebbleOptions = {}, acme = {}, config = {}, standIn = true } = {}) {
  // Two more for a second instance.
  const [http, https, secondHttp, secondHttps] = await freePorts(4)
  const ports = { http, https, secondHttp, secondHttps }
  const pebble = await startPebble(t, { httpPort: ports.http, tlsPort: ports.https, ...pebbleOptions })
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
  return { ports, pebble, site, storage: path.join(site.dir, 'state', 'acme'), standIn: standInFingerprint }
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
 * @param {string} storage the ACME storage directory
 * @returns {Promise<string>} the SHA-256 fingerprint of the stored certificate of NAME
 */
async function storedFingerprint (storage) {
  const pem = await fs.readFile(path.join(storage, 'certificates', NAME, 'cert.pem'), 'utf8')
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
