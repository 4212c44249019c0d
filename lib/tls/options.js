'use strict'

const { createSniTable } = require('./sni')
const { ACME_TLS_PROTOCOL } = require('../acme/worker')

/**
 * The TLS settings shared by the default certificate and every SNI one,
 * the session ticket keys of every worker among them.
 * @param {object} config
 * @param {{ticketKeys: string}} material from readTlsMaterial
 * @returns {object} options for tls.createSecureContext
 */
function contextOptions (config, material) {
  const options = {
    minVersion: config.tlsMinVersion,
    maxVersion: config.tlsMaxVersion,
    ecdhCurve: config.ecdhCurve,
    ticketKeys: Buffer.from(material.ticketKeys, 'base64')
  }
  if (config.cipherSuite !== '') options.ciphers = config.cipherSuite
  if (config.signatureAlgorithms !== '') options.sigalgs = config.signatureAlgorithms
  return options
}

/**
 * Options for https.createServer / http2.createSecureServer (and for
 * server.setSecureContext), built once per worker from the configuration
 * and the PEM contents the primary read.
 * @param {object} config
 * @param {{cert: string, key: string, sni: object, ticketKeys: string}} material from readTlsMaterial
 * @param {{select: Function}} [sni] from createSniSelector, when SNI entries may exist
 * @returns {object}
 */
function secureServerOptions (config, material, sni) {
  const options = {
    ...contextOptions(config, material),
    requestCert: config.useClientCertificate,
    rejectUnauthorized: config.useClientCertificate && config.rejectUnauthorizedClientCertificates,
    // A client that never finishes its handshake holds a connection like a
    // slow header does.
    handshakeTimeout: config.headersTimeout
  }
  // Without a default certificate (automatic HTTPS before its first one) a
  // handshake that the SNI callback finds nothing for fails.
  if (material.cert !== null) Object.assign(options, { cert: material.cert, key: material.key })
  if (sni !== undefined) options.SNICallback = sni.select
  return options
}

/**
 * The server's SNICallback. A reload starts new workers, whose servers get
 * their own. Names that automatic HTTPS manages take its certificate first.
 * @param {object} config
 * @param {{sni: object}} material
 * @param {import('../acme/worker').WorkerCertificates} certificates the worker's automatic HTTPS certificates
 * @returns {{select: (servername: string, callback: Function) => void}}
 */
function createSniSelector (config, material, certificates) {
  const options = contextOptions(config, material)
  const table = Object.keys(material.sni).length === 0 ? null : createSniTable(material.sni, options)
  certificates.configure(config, options)
  // No match keeps the server's default certificate. Called by Node with
  // the TLS socket as `this`.
  function select (servername, callback) {
    const name = servername.toLowerCase()
    const configured = table === null ? undefined : table.lookup(name) || undefined
    const managed = certificates.managedName(name)
    if (managed === null && configured === undefined && certificates.demandTimeout !== 0) {
      onDemand(certificates, name, offersAcmeTls(this), callback)
      return
    }
    if (managed === null) {
      callback(null, configured)
      return
    }
    certificates.select(managed, offersAcmeTls(this)).then((context) => callback(null, context || configured), callback)
  }
  return { select }
}

// A name no configuration lists, with acme.onDemand: its certificate (a
// validation gets the open challenge's), or the handshake ends (Node sends
// no alert from here), never with another name's certificate.
function onDemand (certificates, name, validation, callback) {
  const context = validation === true ? certificates.select(name, true) : certificates.demand(name)
  context.then((found) => found === null ? callback(new Error('no certificate for ' + name)) : callback(null, found), callback)
}

/**
 * Whether the handshake is a tls-alpn-01 validation. Under TLS 1.3 the
 * protocol is chosen before the certificate, so the socket knows it (none
 * chosen: no validation); Node has no public way to ask for it during the
 * SNI callback, hence the guarded use of its handle. Under TLS 1.2 the
 * protocol comes later: unknown.
 * @param {tls.TLSSocket|undefined} socket
 * @returns {boolean|null} null when unknown
 */
function offersAcmeTls (socket) {
  const handle = socket && socket._handle
  if (!handle || typeof handle.getALPNNegotiatedProtocol !== 'function') return null
  const protocol = handle.getALPNNegotiatedProtocol()
  if (typeof protocol === 'string') return protocol === ACME_TLS_PROTOCOL
  return socket.getProtocol() === 'TLSv1.3' ? false : null
}

/**
 * With tls-alpn-01, add `acme-tls/1` to the protocols the server accepts:
 * a client that offers only that one (the CA's validation) is otherwise
 * refused with "no application protocol" before any certificate is sent.
 * Browsers never offer it, so nobody else negotiates it. Node sets an
 * HTTP/2 server's list itself and offers no public way to extend it, so
 * the server's encoded list (length-prefixed names) is extended, when it
 * is there in that form.
 * @param {import('node:tls').Server} server
 * @param {object} config
 */
function offerAcmeTls (server, config) {
  if (!config.acme.enabled || !config.acme.challenges.includes('tls-alpn-01') || !Buffer.isBuffer(server.ALPNProtocols)) return
  const name = Buffer.from(ACME_TLS_PROTOCOL)
  server.ALPNProtocols = Buffer.concat([server.ALPNProtocols, Buffer.from([name.length]), name])
}

/**
 * The SETTINGS svr sends HTTP/2 clients: http2Settings (whose defaults the
 * schema fills in), with the header list bounded by maxHeaderSize as
 * HTTP/1.1 heads are unless it says otherwise.
 * @param {object} config
 * @returns {object}
 */
function http2Settings (config) {
  const settings = { maxHeaderListSize: config.maxHeaderSize, ...config.http2Settings }
  // The schema accepts SVR.JS's alias; Node knows only maxHeaderListSize.
  if (config.http2Settings.maxHeaderSize !== undefined && config.http2Settings.maxHeaderListSize === undefined) {
    settings.maxHeaderListSize = config.http2Settings.maxHeaderSize
  }
  delete settings.maxHeaderSize
  // WebSockets over HTTP/2 (RFC 8441) come as extended CONNECT, which a
  // client may send only when the server offers it; only proxy routes take them.
  if (config.proxy.length !== 0) settings.enableConnectProtocol = true
  return settings
}

module.exports = { contextOptions, secureServerOptions, createSniSelector, http2Settings, offerAcmeTls }
