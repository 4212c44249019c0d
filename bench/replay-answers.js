'use strict'

// The answers of bench/bare-replay.js, recorded from svr by bench/own.js,
// and what of them is sent again.
//
// A file of answers maps a request path (no query) to svr's answer on each
// protocol it was asked over:
//   { "/1k.html": { "h1": ANSWER, "h2": ANSWER } }
//   ANSWER: { "status": 200, "headers": [[name, value], ...], "body": base64 }
// "h1" is the HTTP/1.1 answer (over TLS in the file of a secure svr), its
// header names as svr wrote them (res.rawHeaders); "h2" the HTTP/2 answer of
// a secure svr, names lowercased, pseudo-headers left out. The file keeps
// every header svr sent; the ones a replay must not send are left out when
// the replay starts (replayable), so the file stays the record of svr.

// Node adds Date itself; Connection and Keep-Alive belong to the replay's own
// connection, Transfer-Encoding to how it frames the body (chunked again when
// svr sent no Content-Length, as writeHead then end does).
const NOT_REPLAYED = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding'])
const REQUEST_ID = 'x-request-id'

/**
 * @param {string[]} raw res.rawHeaders: name, value, name, value, …
 * @returns {string[][]} [[name, value], …] in the order received
 */
function pairsOf (raw) {
  const pairs = []
  for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i], raw[i + 1]])
  return pairs
}

/**
 * The recorded headers a replay sends again: none that belongs to the
 * connection or to the framing, no Date, no pseudo-header.
 * @param {string[][]} pairs
 * @returns {string[][]}
 */
function replayable (pairs) {
  return pairs.filter(([name]) => !name.startsWith(':') && !NOT_REPLAYED.has(name.toLowerCase()))
}

/**
 * A recorded HTTP/1.1 answer made ready to send with res.writeHead(status,
 * headers): headers a flat list (name, value, …), and where in it the
 * value of X-Request-Id is, to put a fresh one there per request.
 * @param {{status: number, headers: string[][], body: string}} answer
 * @returns {{status: number, headers: string[], idAt: number, body: Buffer}} idAt -1: no X-Request-Id
 */
function h1Answer (answer) {
  const headers = replayable(answer.headers).flat()
  const name = headers.findIndex((value, i) => i % 2 === 0 && value.toLowerCase() === REQUEST_ID)
  return { status: answer.status, headers, idAt: name === -1 ? -1 : name + 1, body: Buffer.from(answer.body, 'base64') }
}

/**
 * A recorded HTTP/2 answer made ready for stream.respond: one object, the
 * status as :status, names lowercased, a name svr sent twice with both
 * values.
 * @param {{status: number, headers: string[][], body: string}} answer
 * @returns {{headers: object, hasId: boolean, body: Buffer}} hasId: svr sent an X-Request-Id
 */
function h2Answer (answer) {
  const headers = { ':status': answer.status }
  for (const [name, value] of replayable(answer.headers)) {
    const key = name.toLowerCase()
    headers[key] = Object.hasOwn(headers, key) ? [].concat(headers[key], value) : value
  }
  return { headers, hasId: Object.hasOwn(headers, REQUEST_ID), body: Buffer.from(answer.body, 'base64') }
}

/**
 * @param {string} url a request's target
 * @returns {string} its path, the query cut off
 */
function pathOf (url) {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

module.exports = { pairsOf, replayable, h1Answer, h2Answer, pathOf }
