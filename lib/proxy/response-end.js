'use strict'

const { responseTrailers } = require('./headers')

// What svr holds of an HTTP/2 upstream's answer for a slow client before it
// pauses the upstream (below): a few streaming calls' worth, not a download.
const HTTP2_HOLD_BYTES = 1024 * 1024

/**
 * Whether the upstream must be paused now that the client's response is
 * full (its write returned false). An HTTP/1.1 upstream is paused at once.
 * An HTTP/2 one only past HTTP2_HOLD_BYTES: undici 7 ends a paused HTTP/2
 * response as soon as its trailers arrive, dropping the data it had
 * buffered, so pausing early would cut short the many gRPC answers that a
 * client reads a moment late; the response is cut if it happens all the
 * same (passTrailers).
 * @param {import('node:http').ServerResponse} res the client's
 * @param {import('./upstream').Upstream} upstream
 * @returns {boolean}
 */
function mustPause (res, upstream) {
  return !upstream.http2 || res.writableLength > HTTP2_HOLD_BYTES
}

/**
 * End the client's response as the upstream's answer ended: with its
 * trailer fields over HTTP/2, and over HTTP/1.1 when the response is
 * chunked (an HTTP/1.0 client, or a response with a Content-Length, has
 * no place for them; Node leaves them out). A response that cannot end
 * whole is cut instead, never made to look complete.
 * @param {object} req the client's request
 * @param {import('node:http').ServerResponse} res the client's response
 * @param {object} controller undici's, of the exchange
 * @param {object} trailers onResponseEnd's
 * @returns {string|null} why the response was cut, for the error log
 *   after the upstream's name; null when it ended
 */
function endWithTrailers (req, res, controller, trailers) {
  const problem = passTrailers(req, res, controller, trailers)
  if (problem === null) {
    res.end()
    return null
  }
  cutResponse(req, res)
  return problem + '; the response is cut'
}

/**
 * Cut a response the client must not take for complete: HTTP/1.1 closes
 * the connection; HTTP/2 resets the stream with INTERNAL_ERROR (a reset
 * without an error is NO_ERROR, which a client reads as the answer's end).
 * @param {object} req the client's request
 * @param {import('node:http').ServerResponse} res
 */
function cutResponse (req, res) {
  res.destroy(req.httpVersionMajor === 2 ? new Error('the upstream\'s answer cannot be passed on whole') : undefined)
}

// Hand the trailers to the response: null, or why it cannot end whole.
function passTrailers (req, res, controller, trailers) {
  const raw = controller.rawTrailers
  // undici 7 hands an HTTP/2 upstream's trailers to onResponseEnd as {}
  // (it parses Node's header object as a flat list); the object itself is
  // the controller's rawTrailers. An HTTP/1.1 upstream's are a list there.
  const overHttp2 = raw !== null && typeof raw === 'object' && !Array.isArray(raw)
  if (overHttp2 && controller.paused && Object.keys(raw).length !== 0) {
    return 'sent its trailers while its HTTP/2 stream was paused for a slow client (data undici had buffered is lost)'
  }
  const fields = responseTrailers(overHttp2 ? raw : trailers)
  if (Object.keys(fields).length === 0) return null
  if (req.method === 'HEAD' || !carriesTrailers(req, res)) return null
  try {
    res.addTrailers(fields)
  } catch (err) {
    return 'sent an unusable trailer: ' + err.message
  }
  return null
}

// Whether the response can end with trailers. Its head goes out now if it
// has not yet (an answer without body): ended with the head, a response has
// no trailers, on HTTP/2 (the HEADERS frame ends the stream) as on HTTP/1.1
// (Node gives it a Content-Length of 0).
function carriesTrailers (req, res) {
  if (req.httpVersionMajor === 2) {
    if (!res.headersSent) res.flushHeaders()
    return true
  }
  if (!res.headersSent) {
    if (res.hasHeader('content-length')) return false
    res.flushHeaders()
  }
  return res.chunkedEncoding === true
}

module.exports = { mustPause, endWithTrailers, cutResponse }
