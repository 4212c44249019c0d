'use strict'

// Node checks header and request deadlines only this often (30 s by
// default), so a deadline of 20 s could otherwise hold a slow client 50 s.
const CHECK_INTERVAL_MS = 1000

/**
 * Node's timeout and size settings for an HTTP/1.x server, from the
 * configuration's limits. Passed to the constructor so Node validates them
 * together.
 * @param {object} config
 * @returns {object}
 */
function httpLimitOptions (config) {
  const requestTimeout = config.requestTimeout
  // Node refuses a header deadline later than the whole-request one, and
  // the earlier deadline wins anyway.
  const headersTimeout = requestTimeout > 0 ? Math.min(config.headersTimeout, requestTimeout) : config.headersTimeout
  return {
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: config.keepAliveTimeout,
    maxHeaderSize: config.maxHeaderSize,
    connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, headersTimeout)
  }
}

/**
 * Apply the limits to any of svr's servers. An HTTP/2 server takes the
 * HTTP/1.1 ones as properties (they govern its HTTP/1.1 fallback), and
 * every server takes maxConnections.
 * @param {import('node:net').Server} server
 * @param {object} config
 */
function applyLimits (server, config) {
  Object.assign(server, httpLimitOptions(config))
  if (config.maxConnections > 0) server.maxConnections = config.maxConnections
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {number} max maxRequestBodySize
 * @returns {boolean} whether the declared body is larger than allowed
 */
function declaresTooLargeBody (req, max) {
  const length = req.headers['content-length']
  // Node has already refused a malformed or conflicting Content-Length.
  return length !== undefined && Number(length) > max
}

module.exports = { httpLimitOptions, applyLimits, declaresTooLargeBody }
