'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const https = require('node:https')
const path = require('node:path')
const selfsigned = require('selfsigned')

/**
 * Generate a throwaway self-signed certificate (EC P-256, SHA-256) in
 * JavaScript, so that the TLS tests need no openssl command.
 * @param {string} dir where cert and key files go
 * @param {string} name file name stem
 * @param {string[]} [dnsNames] subject alternative names; the first is also the CN
 * @returns {Promise<{cert: string, key: string, fingerprint: string}>} file paths
 *   and the SHA-256 fingerprint as Node's peer certificate reports it
 */
async function makeCertificate (dir, name, dnsNames = ['localhost']) {
  const cert = path.join(dir, name + '.crt')
  const key = path.join(dir, name + '.key')
  const pems = await selfsigned.generate([{ name: 'commonName', value: dnsNames[0] }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: dnsNames.map((value) => ({ type: 2, value })) }]
  })
  await fs.writeFile(cert, pems.cert)
  await fs.writeFile(key, pems.private, { mode: 0o600 })
  return { cert, key, fingerprint: new crypto.X509Certificate(pems.cert).fingerprint256 }
}

/**
 * One HTTPS request on a new connection (so each makes its own handshake),
 * trusting any certificate.
 * @param {number} port
 * @param {string} target
 * @param {{method?: string, headers?: object, servername?: string, maxVersion?: string, body?: string, timeout?: number}} [opts]
 * @returns {Promise<{status: number, headers: object, body: string, fingerprint: string, protocol: string}>}
 */
function httpsRequest (port, target, opts = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1',
      port,
      path: target,
      method: opts.method || 'GET',
      headers: opts.headers,
      servername: opts.servername,
      maxVersion: opts.maxVersion,
      rejectUnauthorized: false,
      agent: false
    }, (res) => {
      const chunks = []
      const peer = res.socket.getPeerCertificate()
      const protocol = res.socket.getProtocol()
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({
        status: res.statusCode,
        headers: res.headers,
        body: Buffer.concat(chunks).toString(),
        fingerprint: peer.fingerprint256,
        protocol
      }))
      res.on('error', reject)
    })
    req.setTimeout(opts.timeout || 10000, () => req.destroy(new Error('request timed out: ' + target)))
    req.on('error', reject)
    req.end(opts.body)
  })
}

/**
 * The plain-HTTP port of a secure svr, from its second "listening on" line.
 * @param {{output: string, waitFor: Function}} svr from startSvr
 * @returns {Promise<number>}
 */
async function plainPort (svr) {
  const match = await svr.waitFor(/listening on http:\/\/[^\s]+:(\d+) \(plain HTTP/)
  return Number(match[1])
}

module.exports = { makeCertificate, httpsRequest, plainPort }
