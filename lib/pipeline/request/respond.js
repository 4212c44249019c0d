'use strict'

const http = require('node:http')
const path = require('node:path')
const { LRUCache } = require('lru-cache')
const { escapeHtml } = require('../../util/escape-html')
const { createFileCache } = require('../../util/file-cache')
const { DESCRIPTIONS, EXTRA_REASONS } = require('./error-descriptions')
const { requestIdOf } = require('../../logging/access-log')
const { contextOf } = require('./context')
const { sendPathHeaders } = require('./custom-headers')
const { unwrapResponse, headForWrappers } = require('./tolerant-response')

// Headers describing a representation that an error page replaces, in
// lower case: removeHeader lower-cases the name it is given, which costs a
// new string per call for any other spelling.
const REPRESENTATION_HEADERS = ['content-encoding', 'content-language', 'content-range', 'etag', 'last-modified',
  'accept-ranges', 'content-disposition']
const PLACEHOLDER = /\{(errorMessage|errorDesc|stack|path|server|contact)\}/g
const STACK_HIDDEN = '[error stack hidden]'
const BUILT_IN_CSP = "default-src 'none'; style-src 'unsafe-inline'"
const NO_EXTRA = Object.freeze({})
// Built-in pages rendered once per status and Host: scanners ask for
// thousands of missing paths, and each 404 page is the same bytes. Host is
// the client's to choose, so the cache is bounded.
const RENDERED_PAGES = 256
// A DNS name (253) and a port (":65535"), or a bracketed IPv6 address and port.
const MAX_KEPT_HOST = 262

/**
 * @param {number} status
 * @returns {string} the reason phrase, including SVR.JS's non-standard ones
 */
function reasonPhrase (status) {
  return http.STATUS_CODES[status] || EXTRA_REASONS[status] || 'Unknown Status'
}

/**
 * The only writer of error pages and redirects. Everything that depends on
 * the configuration (template rules, contact line, server string) is worked
 * out here once per worker. Which errorPages entries apply, and the
 * `{path}` headers, come from the request's site (lib/pipeline/site.js).
 * @param {object} options runtime options
 * @param {{serverString: string, log: object, sites?: object}} shared
 */
function createResponder (options, shared) {
  const base = responderBase(options.config, shared)
  const renderedPage = createRenderedPages(base)

  /**
   * Answer with an error page.
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   * @param {number} status
   * @param {{headers?: object, error?: Error, extName?: string, description?: string}} [extra]
   *   `description`: plain text that replaces the status's standard sentence in {errorDesc}
   * @returns {Promise<void>|undefined} a promise when a template must be read first
   */
  function sendError (req, res, status, extra = NO_EXTRA) {
    if (res.headersSent) {
      sendLateError(base, req, res, status, extra)
      return
    }
    const code = DESCRIPTIONS[status] === undefined ? 501 : status
    const candidates = templateFiles(base, req, code)
    // Templates read (or found absent) a moment ago: answered at once.
    const known = knownTemplate(base.templates, candidates)
    if (known === undefined) return loadThenWrite(req, res, code, extra, candidates)
    writeError(req, res, code, extra, known, null)
  }

  async function loadThenWrite (req, res, code, extra, candidates) {
    let template = null
    let loadError = null
    try {
      template = await loadTemplate(base.templates, candidates)
    } catch (err) {
      loadError = err
      shared.log.warn('cannot read the error page for ' + code + ': ' + err.message)
    }
    if (res.headersSent || res.destroyed) return
    writeError(req, res, code, extra, template, loadError)
  }

  function writeError (req, res, code, extra, template, loadError) {
    if (template === null && loadError === null && isPlainPage(code, extra)) {
      guardedWritePage(base, req, res, code, renderedPage(req, code), extra.headers, true)
      return
    }
    const values = pageValues(base, req, code, extra)
    const body = template === null
      ? builtInPage(values, loadError)
      : template.replace(PLACEHOLDER, (match, name) => values[name])
    guardedWritePage(base, req, res, code, body, extra.headers, template === null)
  }

  /**
   * Redirect with a small HTML body naming the target.
   * @param {http.IncomingMessage} req
   * @param {http.ServerResponse} res
   * @param {string} location already a valid URL reference
   * @param {number} [status] 301, 302, 307 or 308
   */
  function redirect (req, res, location, status = 301) {
    const body = '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>' + status + ' ' +
      reasonPhrase(status) + '</title></head><body><p>Redirecting to <a href="' + escapeHtml(location) + '">' +
      escapeHtml(location) + '</a></p></body></html>\n'
    try {
      answerPathHeaders(req, res)
      res.statusCode = status
      res.setHeader('Location', location)
      res.setHeader('Content-Type', 'text/html; charset=utf-8')
      res.setHeader('Content-Length', Buffer.byteLength(body))
      headForWrappers(res)
      res.end(req.method === 'HEAD' ? undefined : body)
    } catch (err) {
      recoverFromWrapper(base, req, res, err)
    }
  }

  return { sendError, redirect }
}

// Too late for a status line. A response still being written is cut, so
// the client sees a truncated response rather than a silently incomplete
// one; one already ended (code that failed after answering, such as a
// second writeHead through a mod's wrapper) is complete, and cutting it
// could lose what is still buffered. The log says which, beside the
// access line that shows the status the client got.
function sendLateError (base, req, res, status, extra) {
  const id = requestIdOf(req)
  const complete = res.writableEnded
  base.shared.log.error((id === null ? '' : 'request ' + id + ': ') + status + lateReason(extra) + ' after the headers of a ' +
    res.statusCode + ' response were sent; ' + (complete ? 'that response was complete and stays as sent' : 'the response is cut short'))
  if (!complete) res.destroy()
}

// A mod may have wrapped the response's methods and fail inside its
// wrapper: a throw, or a wrapper that ends up calling itself until the
// stack runs out. The page then goes out through the response class's
// own methods, as a 500 naming the failure, or the response is cut when
// the wrapper got its headers out first; either way the worker lives on.
function guardedWritePage (base, req, res, code, body, headers, builtIn) {
  try {
    writePage(req, res, code, body, headers, builtIn)
  } catch (err) {
    recoverFromWrapper(base, req, res, err)
  }
}

function recoverFromWrapper (base, req, res, err) {
  const unwrapped = unwrapResponse(res)
  // Nothing of the application's stood in the way: svr's own mistake,
  // which must not be hidden.
  if (unwrapped.length === 0) throw err
  const id = requestIdOf(req)
  base.shared.log.error((id === null ? '' : 'request ' + id + ': ') + 'application code that wrapped the response (' +
    unwrapped.join(', ') + ') failed while svr answered through it:', err)
  if (res.headersSent) {
    sendLateError(base, req, res, 500, { error: err })
    return
  }
  writePage(req, res, 500, builtInPage(pageValues(base, req, 500, { error: err }), null), undefined, true)
}

// What the responder works out once from the configuration: the template
// rules, the files every request falls back on, and the contact line.
function responderBase (config, shared) {
  const root = config.wwwroot
  // Under the file store's freshness policy: an edited template shows within fileCacheTtl.
  const templates = createFileCache({ ttl: config.fileCacheTtl })
  const rules = config.errorPages.map((entry) => ({ scode: entry.scode, file: path.resolve(root, entry.path) }))
  const page404 = config.page404 ? path.resolve(root, config.page404) : null
  const contact = escapeHtml(config.serverAdministratorEmail).replace(/\./g, '[dot]').replace(/@/g, '[at]')
  // Per status, the templates every request falls back on: page404 for a
  // 404, then `.<status>` and `<status>.html` in the webroot.
  const fallbacks = {}
  for (const status of Object.keys(DESCRIPTIONS)) {
    const files = [path.join(root, '.' + status), path.join(root, status + '.html')]
    if (Number(status) === 404 && page404 !== null) files.unshift(page404)
    fallbacks[status] = Object.freeze(files)
  }
  return { rules, templates, fallbacks, contact, config, shared }
}

/**
 * The built-in pages of plain answers (isPlainPage), each rendered on its
 * first use for a status and Host, the only part of such a page that comes
 * from the request. A page is kept as its text, as it was handed to
 * res.end before, for 3.x mods that wrap res.end and treat the body as a
 * string; a Host longer than a host name and port is rendered every time,
 * so that the client cannot make the kept pages large.
 * @returns {(req: http.IncomingMessage, code: number) => string}
 */
function createRenderedPages (base) {
  const pages = new LRUCache({ max: RENDERED_PAGES })
  return function renderedPage (req, code) {
    const host = typeof req.headers.host === 'string' ? req.headers.host : ''
    if (host.length > MAX_KEPT_HOST) return plainPage(base, req, code)
    const key = code + ' ' + host
    let page = pages.get(key)
    if (page === undefined) {
      page = plainPage(base, req, code)
      pages.set(key, page)
    }
    return page
  }
}

function plainPage (base, req, code) {
  return builtInPage(pageValues(base, req, code, NO_EXTRA), null)
}

// The site of a request the pipeline has not seen (an HTTP/2 CONNECT)
// comes from its Host header.
function siteOf (base, req) {
  const ctx = contextOf(req)
  return ctx !== null ? ctx.site : base.shared.sites.forRequest(req)
}

// An answer made before the URL is final names it as it is now.
function answerPathHeaders (req, res) {
  const ctx = contextOf(req)
  if (ctx !== null) sendPathHeaders(req, res, ctx)
}

function lateReason (extra) {
  if (extra.error == null) return ''
  const error = extra.error
  return ' (' + (error instanceof Error ? error.name + ': ' + error.message : String(error.stack || error)) + ')'
}

/**
 * The files that may hold the page for a status, first choice first: the
 * matching errorPages entries, page404, then `.<status>` and `<status>.html`
 * in the webroot.
 * @returns {string[]}
 */
function templateFiles (base, req, status) {
  if (base.rules.length === 0) return base.fallbacks[status]
  const files = []
  for (const number of siteOf(base, req).errorPages) {
    const rule = base.rules[number]
    if (rule.scode === status) files.push(rule.file)
  }
  return files.length === 0 ? base.fallbacks[status] : files.concat(base.fallbacks[status])
}

// The first template that exists, when every file up to it is known;
// undefined when one must still be read.
function knownTemplate (templates, files) {
  for (const file of files) {
    const content = templates.peek(file)
    // A template found, or one not known yet (undefined): either ends the search.
    if (content !== null) return content
  }
  return null
}

async function loadTemplate (templates, files) {
  for (const file of files) {
    const content = await templates.get(file)
    if (content !== null) return content
  }
  return null
}

function pageValues (base, req, status, extra) {
  const { config, shared } = base
  let stack = ''
  if (extra.error != null) {
    stack = config.stackHidden
      ? STACK_HIDDEN
      : escapeHtml(extra.error.stack || String(extra.error)).replace(/\r?\n/g, '<br/>').replace(/ {2}/g, '&nbsp;&nbsp;')
  }
  const contactLine = 'Contact the server administrator: ' + base.contact + '.'
  let server = shared.serverString
  if (config.exposeModsInErrorPages && extra.extName) server += ' ' + extra.extName
  if (req.headers.host) server += ' on ' + req.headers.host
  const values = {
    errorMessage: escapeHtml(status + ' ' + reasonPhrase(status)),
    errorDesc: '',
    stack,
    path: escapeHtml(req.url),
    server: escapeHtml(server),
    contact: base.contact
  }
  const stackHtml = stack === '' ? '' : '<br/><code>' + stack + '</code>'
  const description = typeof extra.description === 'string' ? extra.description : DESCRIPTIONS[status]
  values.errorDesc = escapeHtml(description)
    .replace('{contact}', () => contactLine)
    .replace('{stack}', () => stackHtml)
  // Lets a user's report of a server error be matched to the log lines.
  const requestId = status >= 500 ? requestIdOf(req) : null
  if (requestId !== null) values.errorDesc += '<br/>Request ID: <code>' + escapeHtml(requestId) + '</code>'
  return values
}

/**
 * Whether the built-in page of this answer is the same for every request of
 * a Host: no error stack, no description or mod name of its own, and no
 * request id (5xx pages carry one).
 * @param {number} code
 * @param {object} extra sendError's
 * @returns {boolean}
 */
function isPlainPage (code, extra) {
  return code < 500 && extra.error == null && typeof extra.description !== 'string' && extra.extName == null
}

function builtInPage (values, loadError) {
  const extra = loadError === null
    ? ''
    : '<p>Additionally, an error (' + escapeHtml(loadError.code || 'unknown') + ') occurred while loading the error page.</p>'
  return '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>' + values.errorMessage + '</title>' +
    '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem;color:#222}' +
    'h1{font-size:1.6rem;color:#a32}footer{margin-top:2rem;font-size:.85rem;color:#666}' +
    '@media (prefers-color-scheme:dark){body{background:#1b1b1b;color:#ddd}footer{color:#999}}</style></head>' +
    '<body><h1>' + values.errorMessage + '</h1><p>' + values.errorDesc + '</p>' + extra +
    '<footer><em>' + values.server + '</em></footer></body></html>\n'
}

function writePage (req, res, status, body, headers, builtIn) {
  answerPathHeaders(req, res)
  for (const name of REPRESENTATION_HEADERS) res.removeHeader(name)
  res.statusCode = status
  res.setHeader('Content-Type', 'text/html; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('X-Content-Type-Options', 'nosniff')
  if (builtIn) res.setHeader('Content-Security-Policy', BUILT_IN_CSP)
  if (status === 405 && !res.hasHeader('Allow')) res.setHeader('Allow', 'GET, HEAD, OPTIONS')
  if (headers) for (const name of Object.keys(headers)) res.setHeader(name, headers[name])
  headForWrappers(res)
  res.end(req.method === 'HEAD' ? undefined : body)
}

module.exports = { createResponder, reasonPhrase }
