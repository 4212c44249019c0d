'use strict'

const { createSniTable } = require('./sni')

// Node's HTTP/2 default lets a client open 2^32-1 streams at once.
const HTTP2_DEFAULTS = { maxConcurrentStreams: 100 }

/**
 * The TLS settings shared by the default certificate and every SNI one.
 * @param {object} config
 * @returns {object} options for tls.createSecureContext
 */
function contextOptions (config) {
  const options = {
    minVersion: config.tlsMinVersion,
    maxVersion: config.tlsMaxVersion,
    ecdhCurve: config.ecdhCurve
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
 * @param {{cert: string, key: string, sni: object}} material from readTlsMaterial
 * @param {{select: Function}} [sni] from createSniSelector, when SNI entries may exist
 * @returns {object}
 */
function secureServerOptions (config, material, sni) {
  const options = {
    ...contextOptions(config),
    cert: material.cert,
    key: material.key,
    requestCert: config.useClientCertificate,
    rejectUnauthorized: config.useClientCertificate && config.rejectUnauthorizedClientCertificates,
    // A client that never finishes its handshake holds a connection like a
    // slow header does.
    handshakeTimeout: config.headersTimeout
  }
  if (sni !== undefined) options.SNICallback = sni.select
  return options
}

/**
 * The server's SNICallback, with a table that a reload can replace (the
 * callback itself is fixed when the server is created).
 * @param {object} config
 * @param {{sni: object}} material
 * @returns {{select: (servername: string, callback: Function) => void, update: (config: object, material: object) => void}}
 */
function createSniSelector (config, material) {
  let table = null
  function update (nextConfig, nextMaterial) {
    table = Object.keys(nextMaterial.sni).length === 0 ? null : createSniTable(nextMaterial.sni, contextOptions(nextConfig))
  }
  // No match keeps the server's default certificate.
  function select (servername, callback) {
    callback(null, table === null ? undefined : table.lookup(servername) || undefined)
  }
  update(config, material)
  return { select, update }
}

/**
 * The SETTINGS svr sends HTTP/2 clients: http2Settings over safe defaults,
 * with the header list bounded by maxHeaderSize as HTTP/1.1 heads are.
 * @param {object} config
 * @returns {object}
 */
function http2Settings (config) {
  const settings = { ...HTTP2_DEFAULTS, maxHeaderListSize: config.maxHeaderSize, ...config.http2Settings }
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

module.exports = { contextOptions, secureServerOptions, createSniSelector, http2Settings }
