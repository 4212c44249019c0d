'use strict'

/**
 * One sentence per status code for the built-in error page and the
 * {errorDesc} placeholder. A status without an entry is answered as 501,
 * as SVR.JS does. `{contact}` and `{stack}` are filled in later.
 */
const DESCRIPTIONS = {
  200: 'The request succeeded.',
  201: 'The resource was created.',
  202: 'The request was accepted and will be processed later.',
  400: 'The server could not understand the request.',
  401: 'You need valid credentials to see this resource.',
  402: 'Payment is required to see this resource.',
  403: 'You are not allowed to see this resource.',
  404: 'The requested resource was not found on this server.',
  405: 'This method is not allowed for the requested resource.',
  406: 'The resource is not available in a form the client accepts.',
  407: 'You need to authenticate with the proxy first.',
  408: 'The server gave up waiting for the request.',
  409: 'The request conflicts with the current state of the resource.',
  410: 'The requested resource is gone and will not come back.',
  411: 'The request needs a Content-Length header.',
  412: 'A precondition of the request does not hold.',
  413: 'The request body is larger than the server accepts.',
  414: 'The request target is longer than the server accepts.',
  415: 'The server does not support the media type of the request body.',
  416: 'The requested range cannot be satisfied.',
  417: 'The server cannot meet the expectation in the Expect header.',
  418: 'The server is a teapot and refuses to brew coffee.',
  421: 'The request was sent to a server that cannot answer it.',
  422: 'The request was well-formed but could not be processed.',
  423: 'The resource is locked.',
  424: 'The request failed because an earlier request failed.',
  425: 'The server will not risk processing a request that might be replayed.',
  426: 'The client must switch to another protocol.',
  428: 'The request must be conditional.',
  429: 'Too many requests were sent; try again later.',
  431: 'The request header fields are larger than the server accepts.',
  451: 'This resource is unavailable for legal reasons.',
  497: 'A plain HTTP request was sent to the HTTPS port.',
  500: 'The server met an unexpected condition. {contact}{stack}',
  501: 'The server does not support the functionality needed for this request.',
  502: 'The server received an invalid response from an upstream server. {contact}',
  503: 'The service is temporarily unavailable. {contact}',
  504: 'An upstream server did not answer in time. {contact}',
  505: 'The HTTP version of the request is not supported.',
  506: 'The server has an internal configuration error in content negotiation. {contact}',
  507: 'The server cannot store what is needed to complete the request.',
  508: 'The server found an infinite loop while processing the request.',
  509: 'The server has exceeded its bandwidth limit. {contact}',
  510: 'The request needs further extensions to be fulfilled.',
  511: 'You need to authenticate to gain network access.',
  598: 'A network read timed out behind the proxy.',
  599: 'A network connection timed out behind the proxy.'
}

// Node's STATUS_CODES lacks the non-standard codes SVR.JS answers with.
const EXTRA_REASONS = {
  497: 'HTTP Request Sent to HTTPS Port',
  598: 'Network Read Timeout Error',
  599: 'Network Connect Timeout Error'
}

// What an error page's description holds for the page alone.
const PLACEHOLDERS = /\{(contact|stack)\}/g

/**
 * The description of an error as plain text, for answers that are not a
 * page (a gRPC status, a JSON body).
 * @param {number} status one with a description
 * @param {{description?: string}} extra sendError's: its own description wins
 * @returns {string}
 */
function plainDescription (status, extra) {
  return typeof extra.description === 'string' ? extra.description : DESCRIPTIONS[status].replace(PLACEHOLDERS, '').trim()
}

module.exports = { DESCRIPTIONS, EXTRA_REASONS, plainDescription }
