'use strict'

const { escapeHtml } = require('../../util/escape-html')
const pages = require('../../error-pages/pages')
const { isGrpcRequest, grpcErrorFields } = require('../../error-pages/grpc')
const { jsonErrorType, jsonErrorBody } = require('../../error-pages/json')
const { sendPathHeaders } = require('./custom-headers')
const { unwrapResponse, headForWrappers, endWrapped } = require('./tolerant-response')
const { knownName } = require('../../util/header-names')

// Headers describing a representation that an error page replaces, in
// lower case. svr's removeHeader (lib/pipeline/request/known-fields.js)
// takes the lower-case form of a name it knows from its table, and
// lower-cases any other name on every call, already lower-case or not
// (about 200 instructions each, seven a page).
const REPRESENTATION_HEADERS = ['content-encoding', 'content-language', 'content-range', 'etag', 'last-modified',
  'accept-ranges', 'content-disposition']
const BUILT_IN_CSP = "default-src 'none'; style-src 'unsafe-inline'"
// One string for every HTML page: a type joined per answer is a new string,
// which the field check compares with the last value in a runtime call.
const HTML_TYPE = 'text/html; charset=utf-8'
const NO_EXTRA = Object.freeze({})

/**
 * The only writer of error pages and redirects. Everything that depends on
 * the configuration (template rules, contact line, server string) is worked
 * out here once per worker (lib/error-pages/pages.js). Which errorPages
 * entries apply, and the `{path}` headers, come from the request's site
 * (lib/pipeline/site.js). Both answers take the request's context, and
 * answer its current request and response.
 * @param {object} options runtime options
 * @param {{serverString: string, log: object}} shared
 */
function createResponder (options, shared) {
  const settings = pages.pageSettings(options.config, shared.serverString)
  for (const name of REPRESENTATION_HEADERS) knownName(name)
  const renderedPage = pages.createRenderedPages(settings)
  const { log } = shared
  // What the helpers below need to answer through a failing wrapper.
  const base = { settings, log }

  /**
   * Answer with an error page.
   * @param {import('./context').RequestContext} ctx
   * @param {number} status
   * @param {{headers?: object, error?: Error, extName?: string, description?: string}} [extra]
   *   `description`: plain text that replaces the status's standard sentence in {errorDesc}
   * @returns {Promise<void>|undefined} a promise when a template must be read first
   */
  function sendError (ctx, status, extra = NO_EXTRA) {
    if (ctx.res.headersSent) {
      sendLateError(log, ctx, status, extra)
      return
    }
    const code = pages.answeredStatus(status)
    if (answeredWithoutPage(base, ctx, code, extra)) return
    const candidates = pages.templateFiles(settings, ctx.site, code)
    // Templates read (or found absent) a moment ago: answered at once.
    const known = pages.knownTemplate(settings.templates, candidates)
    if (known === undefined) return loadThenWrite(ctx, code, extra, candidates)
    writeError(ctx, code, extra, known, null)
  }

  async function loadThenWrite (ctx, code, extra, candidates) {
    let template = null
    let loadError = null
    try {
      template = await pages.loadTemplate(settings.templates, candidates)
    } catch (err) {
      loadError = err
      log.warn('cannot read the error page for ' + code + ': ' + err.message)
    }
    if (ctx.res.headersSent || ctx.res.destroyed) return
    writeError(ctx, code, extra, template, loadError)
  }

  function writeError (ctx, code, extra, template, loadError) {
    if (template === null && loadError === null && pages.isPlainPage(code, extra)) {
      guardedWritePage(base, ctx, code, renderedPage(ctx.req, code), extra.headers, true)
      return
    }
    const values = pages.pageValues(settings, ctx.req, code, extra, ctx.requestId)
    const text = template === null ? pages.builtInPage(values, loadError) : pages.fillTemplate(template, values)
    guardedWritePage(base, ctx, code, new pages.RenderedPage(text), extra.headers, template === null)
  }

  /**
   * Redirect with a small HTML body naming the target.
   * @param {import('./context').RequestContext} ctx
   * @param {string} location already a valid URL reference
   * @param {number} [status] 301, 302, 307 or 308
   */
  function redirect (ctx, location, status = 301) {
    const { req, res } = ctx
    const body = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + status + ' ' +
      pages.reasonPhrase(status) + '</title></head><body><p>Redirecting to <a href="' + escapeHtml(location) + '">' +
      escapeHtml(location) + '</a></p></body></html>\n'
    try {
      sendPathHeaders(req, res, ctx)
      res.statusCode = status
      res.setHeader('Location', location)
      res.setHeader('Content-Type', HTML_TYPE)
      res.setHeader('Content-Length', Buffer.byteLength(body))
      headForWrappers(res)
      res.end(req.method === 'HEAD' ? undefined : body)
    } catch (err) {
      recoverFromWrapper(base, ctx, err)
    }
  }

  return { sendError, redirect }
}

// A mod may have wrapped the response's methods and fail inside its
// wrapper: a throw, or a wrapper that ends up calling itself until the
// stack runs out. The page then goes out through the response class's
// own methods, as a 500 naming the failure, or the response is cut when
// the wrapper got its headers out first; either way the worker lives on.
function guardedWritePage (base, ctx, code, page, headers, builtIn) {
  try {
    writePage(ctx, code, page, headers, builtIn)
  } catch (err) {
    recoverFromWrapper(base, ctx, err)
  }
}

function guardedWriteGrpc (base, ctx, code, extra) {
  try {
    writeGrpcError(ctx, code, extra)
  } catch (err) {
    recoverFromWrapper(base, ctx, err)
  }
}

/**
 * Answer an error to a client that reads no page: a gRPC client reads a
 * status from trailers (whatever answers the call with an error: the
 * proxy's 502, 503, 504, 413, an access check's 401 or 403, a 404), and an
 * API client that asks for JSON gets a problem document (RFC 9457).
 * @returns {boolean} whether it was answered
 */
function answeredWithoutPage (base, ctx, code, extra) {
  if (isGrpcRequest(ctx.req)) {
    guardedWriteGrpc(base, ctx, code, extra)
    return true
  }
  const jsonType = jsonErrorType(ctx.req)
  if (jsonType === null) return false
  guardedWriteJson(base, ctx, code, extra, jsonType)
  return true
}

function guardedWriteJson (base, ctx, code, extra, type) {
  const page = new pages.RenderedPage(jsonErrorBody(code, extra, ctx.requestId))
  try {
    writePage(ctx, code, page, extra.headers, false, type + '; charset=utf-8')
  } catch (err) {
    recoverFromWrapper(base, ctx, err)
  }
}

function recoverFromWrapper ({ settings, log }, ctx, err) {
  const unwrapped = unwrapResponse(ctx.res)
  // Nothing of the application's stood in the way: svr's own mistake,
  // which must not be hidden.
  if (unwrapped.length === 0) throw err
  log.error('request ' + ctx.requestId + ': application code that wrapped the response (' +
    unwrapped.join(', ') + ') failed while svr answered through it:', err)
  if (ctx.res.headersSent) {
    sendLateError(log, ctx, 500, { error: err })
    return
  }
  const values = pages.pageValues(settings, ctx.req, 500, { error: err }, ctx.requestId)
  writePage(ctx, 500, new pages.RenderedPage(pages.builtInPage(values, null)), undefined, true)
}

// Too late for a status line. A response still being written is cut, so
// the client sees a truncated response rather than a silently incomplete
// one; one already ended (code that failed after answering, such as a
// second writeHead through a mod's wrapper) is complete, and cutting it
// could lose what is still buffered. The log says which, beside the
// access line that shows the status the client got.
function sendLateError (log, ctx, status, extra) {
  const { res } = ctx
  const complete = res.writableEnded
  log.error('request ' + ctx.requestId + ': ' + status + lateReason(extra) + ' after the headers of a ' +
    res.statusCode + ' response were sent; ' + (complete ? 'that response was complete and stays as sent' : 'the response is cut short'))
  if (!complete) res.destroy()
}

function lateReason (extra) {
  if (extra.error == null) return ''
  const error = extra.error
  return ' (' + (error instanceof Error ? error.name + ': ' + error.message : String(error.stack || error)) + ')'
}

/**
 * @param {import('./context').RequestContext} ctx
 * @param {number} status
 * @param {import('../../error-pages/pages').RenderedPage} page
 * @param {object|undefined} headers the answer's own fields
 * @param {boolean} builtIn whether svr made the page (it gets a strict CSP)
 * @param {string} [type] the Content-Type, with its charset
 */
function writePage (ctx, status, page, headers, builtIn, type = HTML_TYPE) {
  const { req, res } = ctx
  // An answer made before the URL is final names it as it is now.
  sendPathHeaders(req, res, ctx)
  for (const name of REPRESENTATION_HEADERS) res.removeHeader(name)
  res.statusCode = status
  res.setHeader('Content-Type', type)
  res.setHeader('Content-Length', page.byteLength)
  res.setHeader('X-Content-Type-Options', 'nosniff')
  if (builtIn) res.setHeader('Content-Security-Policy', BUILT_IN_CSP)
  if (status === 405 && !res.hasHeader('Allow')) res.setHeader('Allow', 'GET, HEAD, OPTIONS')
  if (headers) for (const name of Object.keys(headers)) res.setHeader(name, headers[name])
  headForWrappers(res)
  if (req.method === 'HEAD') res.end()
  // A 3.x mod that wraps end gets the page as SVR.JS gave it, the text
  // alone: it may edit it and hand it on with the encoding it was given.
  else if (page.encoding === 'latin1' && !endWrapped(res)) res.end(page.text, 'latin1')
  else res.end(page.text)
}

// A trailers-only gRPC answer: HTTP 200 with the status in its header
// fields and no body, so that over HTTP/2 its one HEADERS frame ends the
// stream. The error's own fields (Retry-After, WWW-Authenticate) go along.
function writeGrpcError (ctx, code, extra) {
  const { req, res } = ctx
  sendPathHeaders(req, res, ctx)
  for (const name of REPRESENTATION_HEADERS) res.removeHeader(name)
  res.removeHeader('content-length')
  res.statusCode = 200
  const fields = grpcErrorFields(req, code, extra, ctx.requestId)
  for (const name of Object.keys(fields)) res.setHeader(name, fields[name])
  if (extra.headers) for (const name of Object.keys(extra.headers)) res.setHeader(name, extra.headers[name])
  headForWrappers(res)
  res.end()
}

module.exports = { createResponder, reasonPhrase: pages.reasonPhrase }
