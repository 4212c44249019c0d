'use strict'

const { reasonPhrase } = require('./pages')
const { plainDescription } = require('./descriptions')

// gRPC status codes (https://grpc.github.io/grpc/core/md_doc_statuscodes.html).
const GRPC = {
  DEADLINE_EXCEEDED: 4,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16
}

// What an error svr answers itself means to a gRPC client. UNAVAILABLE is
// the status clients retry on (a channel's retry policy), so it is kept
// for "no upstream could take the call"; a timeout is the call's deadline
// as far as the client can tell.
const STATUS_OF_HTTP = {
  401: GRPC.UNAUTHENTICATED,
  403: GRPC.PERMISSION_DENIED,
  404: GRPC.UNIMPLEMENTED,
  405: GRPC.UNIMPLEMENTED,
  413: GRPC.RESOURCE_EXHAUSTED,
  429: GRPC.RESOURCE_EXHAUSTED,
  501: GRPC.UNIMPLEMENTED,
  502: GRPC.UNAVAILABLE,
  503: GRPC.UNAVAILABLE,
  504: GRPC.DEADLINE_EXCEEDED
}

const GRPC_TYPE = 'application/grpc'
// grpc-message is percent-encoded (gRPC over HTTP/2, "Responses"): every
// byte but the printable ASCII ones, and "%" itself.
const UNENCODED = /^[\x20-\x24\x26-\x7e]*$/

/**
 * @param {{headers: object}} req
 * @returns {boolean} whether the request is a gRPC call (gRPC-Web ones
 *   too): its errors are answered as gRPC statuses, not as pages
 */
function isGrpcRequest (req) {
  const type = req.headers['content-type']
  return typeof type === 'string' && type.length >= GRPC_TYPE.length && type.slice(0, GRPC_TYPE.length).toLowerCase() === GRPC_TYPE
}

/**
 * @param {number} status the HTTP status svr answers
 * @returns {number} the gRPC status that stands for it
 */
function grpcStatusOf (status) {
  return STATUS_OF_HTTP[status] || GRPC.INTERNAL
}

/**
 * @param {{headers: object}} req a gRPC call
 * @returns {string} the content type of its answer: the call's own media
 *   type (application/grpc, application/grpc+proto, application/grpc-web…),
 *   which its client is sure to accept
 */
function grpcContentType (req) {
  const type = req.headers['content-type']
  const end = type.indexOf(';')
  return (end === -1 ? type : type.slice(0, end)).trim().toLowerCase()
}

/**
 * @param {string} text
 * @returns {string} text as a grpc-message value
 */
function encodeGrpcMessage (text) {
  if (UNENCODED.test(text)) return text
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : '%' + byte.toString(16).toUpperCase().padStart(2, '0')
  }
  return out
}

/**
 * The text of an error page, without its HTML: the status, the
 * description, and for a 5xx the request id that the logs show.
 * @param {number} status one with a description (pages.answeredStatus)
 * @param {{description?: string}} extra sendError's
 * @param {string|null} requestId
 * @returns {string}
 */
function grpcMessage (status, extra, requestId) {
  const text = status + ' ' + reasonPhrase(status) + ': ' + plainDescription(status, extra)
  return status >= 500 && requestId !== null ? text + ' Request ID: ' + requestId : text
}

/**
 * The header fields of a trailers-only gRPC answer (HTTP 200; on HTTP/2 a
 * single HEADERS frame that ends the stream) standing for an HTTP error.
 * An error stack is never part of it.
 * @param {{headers: object}} req a gRPC call
 * @param {number} status the HTTP status it would have had
 * @param {{description?: string}} extra sendError's
 * @param {string|null} requestId
 * @returns {Object<string, string>}
 */
function grpcErrorFields (req, status, extra, requestId) {
  return {
    'content-type': grpcContentType(req),
    'grpc-status': String(grpcStatusOf(status)),
    'grpc-message': encodeGrpcMessage(grpcMessage(status, extra, requestId))
  }
}

module.exports = { isGrpcRequest, grpcStatusOf, grpcErrorFields, encodeGrpcMessage }
