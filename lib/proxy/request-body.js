'use strict'

const { Transform } = require('node:stream')
const { svrError } = require('../errors')

const BODY_LIMIT = 'SVR_ERR_PROXY_BODY_LIMIT'

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {boolean} whether the request has a body to forward
 */
function hasBody (req) {
  if (req.httpVersionMajor === 2) return req.stream !== undefined && !req.stream.endAfterHeaders && !req.readableEnded
  const length = req.headers['content-length']
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined
}

function declaredLength (req) {
  const length = req.headers['content-length']
  return length === undefined ? -1 : Number(length)
}

// A body without Content-Length, cut off past the route's limit.
function limited (req, limit) {
  let seen = 0
  const counter = new Transform({
    transform (chunk, encoding, callback) {
      seen += chunk.length
      if (seen > limit) callback(svrError(BODY_LIMIT, [limit]))
      else callback(null, chunk)
    }
  })
  req.on('error', (err) => counter.destroy(err))
  return req.pipe(counter)
}

module.exports = { hasBody, declaredLength, limited, BODY_LIMIT }
