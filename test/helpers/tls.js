'use strict'

const http2 = require('node:http2')

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const https = require('node:https')
const net = require('node:net')
const path = require('node:path')
const selfsigned = require('selfsigned')

/**
 * Generate a throwaway self-signed certificate (EC P-256, SHA-256) in
 * JavaScript, so that the TLS tests need no openssl command.
 * @param {string} dir where cert and key files go
 * @param {string} name file name stem
 * @param {string[]} [dnsNames] subject alternative names (an IP address
 *   becomes an IP address entry); the first is also the CN
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
    extensions: [{ name: 'subjectAltName', altNames: dnsNames.map((value) => net.isIP(value) === 0 ? { type: 2, value } : { type: 7, ip: value }) }]
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

/**
 * An HTTP/2 session to svr's TLS port on loopback, once the server's
 * SETTINGS have arrived.
 * @param {number} port
 * @returns {Promise<http2.ClientHttp2Session>}
 */
function connectH2 (port) {
  return new Promise((resolve, reject) => {
    const client = http2.connect('https://127.0.0.1:' + port, { rejectUnauthorized: false, servername: 'localhost' })
    client.once('remoteSettings', () => resolve(client))
    client.once('error', reject)
  })
}

/**
 * One HTTP/2 request on an open session, its body read whole.
 * @param {http2.ClientHttp2Session} client
 * @param {object} headers pseudo-headers and headers
 * @param {{endStream?: boolean}} [options] for client.request
 * @returns {Promise<{status: number, headers: object, body: Buffer}>}
 */
function h2Request (client, headers, options) {
  return new Promise((resolve, reject) => {
    const stream = client.request(headers, options)
    const chunks = []
    let head = null
    stream.on('response', (h) => { head = h })
    stream.on('data', (chunk) => chunks.push(chunk))
    stream.on('end', () => resolve({ status: head[':status'], headers: head, body: Buffer.concat(chunks) }))
    stream.on('error', reject)
    stream.setTimeout(10000, () => stream.close(http2.constants.NGHTTP2_CANCEL))
  })
}

/**
 * The configuration of a site served over TLS with HTTP/2 and no plain
 * port, by one worker, on an ephemeral loopback port. One HTTP/2 session
 * may serve a whole test, however slow the machine (keepAliveTimeout).
 * @param {{cert: string, key: string}} cert from makeCertificate
 * @param {object} [extra] more keys, over these
 * @returns {object} for makeSite's writeConfig
 */
function http2SiteConfig (cert, extra = {}) {
  return {
    workers: 1,
    secure: true,
    enableHTTP2: true,
    disableNonEncryptedServer: true,
    sport: '127.0.0.1:0',
    cert: cert.cert,
    key: cert.key,
    keepAliveTimeout: 60000,
    ...extra
  }
}

module.exports = { makeCertificate, httpsRequest, plainPort, connectH2, h2Request, http2SiteConfig }
