'use strict'

const http = require('node:http')
const path = require('node:path')
const { LRUCache } = require('lru-cache')
const { escapeHtml } = require('../util/escape-html')
const { createFileCache } = require('../util/file-cache')
const { DESCRIPTIONS, EXTRA_REASONS } = require('./descriptions')

const PLACEHOLDER = /\{(errorMessage|errorDesc|stack|path|server|contact)\}/g
const STACK_HIDDEN = '[error stack hidden]'
// Built-in pages rendered once per status and Host: scanners ask for
// thousands of missing paths, and each 404 page is the same bytes. Host is
// the client's to choose, so the cache is bounded: this many hosts, each
// with a page per status it was answered.
const RENDERED_HOSTS = 256
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
 * @param {number} status
 * @returns {number} the status answered: one without a description is
 *   answered as 501, as SVR.JS does
 */
function answeredStatus (status) {
  return DESCRIPTIONS[status] === undefined ? 501 : status
}

/**
 * What the error pages of a worker work out once from the configuration:
 * the template rules, the files every request falls back on, and the
 * contact line.
 * @param {object} config
 * @param {string} serverString
 * @returns {object} the page settings the functions below take
 */
function pageSettings (config, serverString) {
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
  return { rules, templates, fallbacks, contact, config, serverString }
}

/**
 * The built-in pages of plain answers (isPlainPage), each rendered on its
 * first use for a status and Host, the only part of such a page that comes
 * from the request. A page is kept as its text, as it was handed to
 * res.end before, for 3.x mods that wrap res.end and treat the body as a
 * string (Node also writes a text body with the head in one string, where
 * bytes would take its longer path of two chunks), and with its length in
 * bytes, measured once. A Host longer than a host name and port is
 * rendered every time, so that the client cannot make the kept pages large.
 * @param {object} settings from pageSettings
 * @returns {(req: http.IncomingMessage, code: number) => RenderedPage}
 */
function createRenderedPages (settings) {
  // Keyed by the Host header as received, not by a string joined with the
  // status: V8 compares a joined key with the kept one in a runtime call.
  const hosts = new LRUCache({ max: RENDERED_HOSTS })
  const plainPage = (req, code) => new RenderedPage(builtInPage(pageValues(settings, req, code, {}, null), null))
  return function renderedPage (req, code) {
    const host = typeof req.headers.host === 'string' ? req.headers.host : ''
    if (host.length > MAX_KEPT_HOST) return plainPage(req, code)
    let pages = hosts.get(host)
    if (pages === undefined) {
      pages = new Map()
      hosts.set(host, pages)
    }
    let page = pages.get(code)
    if (page === undefined) {
      page = plainPage(req, code)
      pages.set(code, page)
    }
    return page
  }
}

/**
 * A page's text with its length in bytes, measured once, and the encoding
 * to hand it to Node in: latin1 when every character is ASCII (its UTF-8
 * bytes are then its Latin-1 bytes). Told latin1, Node's res.end takes the
 * string's length as its byte count and copies it out as it is; told
 * nothing, it measures the UTF-8 length again and converts it (about 2,500
 * instructions for a built-in page).
 */
class RenderedPage {
  /** @param {string} text */
  constructor (text) {
    this.text = text
    this.byteLength = Buffer.byteLength(text)
    this.encoding = this.byteLength === text.length ? 'latin1' : 'utf8'
  }
}

/**
 * The files that may hold the page for a status, first choice first: the
 * matching errorPages entries of the request's site, page404, then
 * `.<status>` and `<status>.html` in the webroot.
 * @param {object} settings from pageSettings
 * @param {{errorPages: number[]}|null} site the request's (lib/pipeline/site.js)
 * @param {number} status
 * @returns {string[]}
 */
function templateFiles (settings, site, status) {
  if (settings.rules.length === 0 || site === null) return settings.fallbacks[status]
  const files = []
  for (const number of site.errorPages) {
    const rule = settings.rules[number]
    if (rule.scode === status) files.push(rule.file)
  }
  return files.length === 0 ? settings.fallbacks[status] : files.concat(settings.fallbacks[status])
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

/**
 * The values of a page's placeholders, escaped.
 * @param {object} settings from pageSettings
 * @param {object} req
 * @param {number} status
 * @param {{error?: Error, extName?: string, description?: string}} extra
 * @param {string|null} requestId shown on 5xx pages, so that a user's
 *   report can be matched to the log lines
 * @returns {Object<string, string>}
 */
function pageValues (settings, req, status, extra, requestId) {
  const { config } = settings
  let stack = ''
  if (extra.error != null) {
    stack = config.stackHidden
      ? STACK_HIDDEN
      : escapeHtml(extra.error.stack || String(extra.error)).replace(/\r?\n/g, '<br/>').replace(/ {2}/g, '&nbsp;&nbsp;')
  }
  const contactLine = 'Contact the server administrator: ' + settings.contact + '.'
  let server = settings.serverString
  if (config.exposeModsInErrorPages && extra.extName) server += ' ' + extra.extName
  if (req.headers.host) server += ' on ' + req.headers.host
  const values = {
    errorMessage: escapeHtml(status + ' ' + reasonPhrase(status)),
    errorDesc: '',
    stack,
    path: escapeHtml(req.url),
    server: escapeHtml(server),
    contact: settings.contact
  }
  const stackHtml = stack === '' ? '' : '<br/><code>' + stack + '</code>'
  const description = typeof extra.description === 'string' ? extra.description : DESCRIPTIONS[status]
  values.errorDesc = escapeHtml(description)
    .replace('{contact}', () => contactLine)
    .replace('{stack}', () => stackHtml)
  if (status >= 500 && requestId !== null) values.errorDesc += '<br/>Request ID: <code>' + escapeHtml(requestId) + '</code>'
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

function fillTemplate (template, values) {
  return template.replace(PLACEHOLDER, (match, name) => values[name])
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

module.exports = {
  reasonPhrase,
  answeredStatus,
  pageSettings,
  createRenderedPages,
  RenderedPage,
  templateFiles,
  knownTemplate,
  loadTemplate,
  pageValues,
  isPlainPage,
  fillTemplate,
  builtInPage
}
