'use strict'

const { SvrHttp2Request, Http2Response } = require('./compat')
const { StreamRequest } = require('./stream-request')
const { contextOfResponse } = require('../pipeline/request/context')
const { kOnClose } = require('../pipeline/request/response-bytes')

const CARRIED_EVENTS = ['finish', 'close']

/**
 * Node's full request and response for an HTTP/2 request that svr's stages
 * began on the bare stream (StreamRequest, StreamResponse): made when the
 * pipeline reaches code that needs them (scripts, mods, a body streamed
 * through an encoder), once per request. They carry on where the stream
 * objects stopped: the status and headers set so far, the request's
 * context and the 'finish' and 'close' listeners (the request counters';
 * the access log's report, a field of the stream response, kOnClose,
 * becomes a 'close' listener of Node's). The body has not been read, so
 * the request stream still holds all of it.
 * @param {StreamRequest} req
 * @param {import('./stream-response').StreamResponse} res
 * @returns {{req: SvrHttp2Request, res: Http2Response}}
 */
function promote (req, res) {
  if (req.promoted !== null) return req.promoted
  const nextReq = new SvrHttp2Request(req.stream, req.headers, undefined, req.rawHeaders)
  const nextRes = new Http2Response(req.stream)
  nextRes.statusCode = res.statusCode
  for (const name of Object.keys(res.headers)) nextRes.setHeader(name, res.headers[name])
  const ctx = contextOfResponse(res)
  if (ctx !== null) ctx.moveTo(nextReq, nextRes)
  res.promoted = true
  // The access log's report, first of the 'close' listeners as it was on the stream's response.
  if (res[kOnClose] !== null) nextRes.on('close', res[kOnClose])
  for (const event of CARRIED_EVENTS) {
    for (const listener of res.rawListeners(event)) nextRes.on(event, listener)
  }
  res.removeAllListeners()
  req.promoted = { req: nextReq, res: nextRes }
  return req.promoted
}

/**
 * @param {object} req
 * @returns {boolean} whether req is svr's object of an HTTP/2 request on
 *   the bare stream (promote gives Node's for it)
 */
function onBareStream (req) {
  return req instanceof StreamRequest
}

module.exports = { promote, onBareStream }
