'use strict'

const crypto = require('node:crypto')
const { statFresh } = require('../../file-store/request-stats')
const { decodePath } = require('../../paths/percent')
const { statusForFsError } = require('../../static/fs-errors')
const { checkPreconditions } = require('../../static/conditional')
const { buildForbiddenPaths, comparablePath, findForbidden } = require('../../access/forbidden-paths')
const { codeLocations } = require('../../application/locate')
const { readEntries, sortEntries } = require('../../listing/read')
const { renderListing } = require('../../listing/render')
const { createPageCache } = require('../../listing/page-cache')
const { createChromeReader, sameChrome } = require('../../listing/chrome')
const { headForWrappers } = require('../request/tolerant-response')

// The directory's own header and footer files are part of the page, not of
// the list (the dot-files among them are hidden anyway).
const NOT_LISTED = new Set(['HEAD.html', 'FOOT.html'])
// Header files are re-checked at most this often; a listing is rebuilt when
// the directory's mtime or a header file changed, and at least this often
// (an edit to a listed file changes its size and date but not the
// directory's mtime).
const RECHECK_MS = 1000
const MAX_AGE_MS = 5000
const DISABLED = Object.freeze({ description: 'Directory listing is disabled on this server.' })

/**
 * Directory listings: a directory without an index file
 * gets an HTML page of its entries when `enableDirectoryListing` (or the
 * first matching `enableDirectoryListingVHost` entry: ctx.site.listing)
 * allows it, else 403.
 * Pages are cached per directory and URL path and served from memory while
 * the directory's mtime and its header files are unchanged.
 * @param {object} options runtime options
 * @param {{respond: object, log: object, serverString: string}} shared
 * @returns {(req, res, ctx) => Promise<boolean>}
 */
function createListingStage (options, shared) {
  const { config } = options
  const { respond, log } = shared
  const readChrome = createChromeReader({ site: config.enableDirectoryListingWithDefaultHead ? config.wwwroot : null, ttl: config.fileCacheTtl, log })
  const pages = createPageCache({ maxEntries: 256, maxBytes: 32 * 1024 * 1024 })
  const hiddenIn = hiddenNames(buildForbiddenPaths(options, codeLocations(options)))
  const etags = config.enableETag

  async function build (ctx, dirMtimeMs) {
    const dir = ctx.fsPath
    const [chrome, entries] = await Promise.all([readChrome(dir), readEntries(dir, hiddenIn(ctx.decodedPath))])
    const { html, csp, custom } = await renderListing({
      path: decodePath(ctx.origHref) || ctx.origHref,
      atRoot: isRoot(ctx.origHref),
      hrefPrefix: lastSegmentPrefix(ctx.origHref),
      entries: sortEntries(entries),
      server: shared.serverString,
      chrome
    })
    const now = Date.now()
    const body = Buffer.from(html)
    const etag = etags ? pageTag(body) : null
    return { body, etag, csp, custom, chrome, dirMtimeMs, builtAt: now, checkedAt: now }
  }

  async function isFresh (page, ctx, dirMtimeMs) {
    const now = Date.now()
    if (page.dirMtimeMs !== dirMtimeMs || now - page.builtAt >= MAX_AGE_MS) return false
    if (now - page.checkedAt < RECHECK_MS) return true
    if (!sameChrome(page.chrome, await readChrome(ctx.fsPath))) return false
    page.checkedAt = now
    return true
  }

  // Concurrent requests for one directory share a single build.
  function pageFor (ctx, stat) {
    return pages.obtain(ctx.fsPath + '\n' + ctx.origHref, () => build(ctx, stat.mtimeMs), (page) => isFresh(page, ctx, stat.mtimeMs))
  }

  return async function listDirectory (req, res, ctx) {
    if (ctx.fsPath === null || (req.method !== 'GET' && req.method !== 'HEAD')) return false
    // The page is rebuilt when the directory's mtime moves, so that mtime
    // must be today's, not the stat cache's.
    const stat = await statFresh(ctx)
    if (stat === null || !stat.isDirectory()) return false
    if (!ctx.site.listing) {
      respond.sendError(ctx, 403, DISABLED)
      return true
    }
    let page
    try {
      page = await pageFor(ctx, stat)
    } catch (err) {
      const status = statusForFsError(err)
      if (status >= 500) log.error(req.method + ' ' + req.url + ' listing failed:', err)
      respond.sendError(ctx, status, { error: status >= 500 ? err : undefined })
      return true
    }
    const status = page.etag === null ? 0 : checkPreconditions(req.headers, page.etag, NaN)
    if (status === 412) {
      respond.sendError(ctx, 412)
    } else {
      writeListing(req, res, page, status === 304)
    }
    return true
  }
}

/**
 * Names the listing leaves out: its own header files, and whatever the
 * forbidden stage would refuse (a config.json in the webroot, mods, …).
 * @param {object} forbidden from buildForbiddenPaths
 * @returns {(decodedDir: string) => (name: string) => boolean}
 */
function hiddenNames (forbidden) {
  const guarded = forbidden.files.size !== 0 || forbidden.dirs.size !== 0
  return function hiddenIn (decodedDir) {
    const base = decodedDir.charCodeAt(decodedDir.length - 1) === 47 /* / */ ? decodedDir : decodedDir + '/'
    return function isHidden (name) {
      if (NOT_LISTED.has(name)) return true
      return guarded && findForbidden(forbidden, comparablePath(base + name)) !== null
    }
  }
}

// A rebuilt page with the same bytes keeps its tag, so a browser's copy
// stays valid across the cache's periodic rebuilds.
function pageTag (body) {
  return '"' + crypto.createHash('sha256').update(body).digest('base64url').slice(0, 27) + '"'
}

function isRoot (urlPath) {
  for (let i = 0; i < urlPath.length; i++) if (urlPath.charCodeAt(i) !== 47 /* / */) return false
  return true
}

// With disableTrailingSlashRedirects a directory may be listed at a URL
// without its `/`: relative links then resolve against the parent, so they
// carry the directory's own name.
function lastSegmentPrefix (urlPath) {
  if (urlPath.charCodeAt(urlPath.length - 1) === 47 /* / */) return ''
  return urlPath.slice(urlPath.lastIndexOf('/') + 1) + '/'
}

function writeListing (req, res, page, notModified) {
  if (page.etag !== null) res.setHeader('ETag', page.etag)
  if (notModified) {
    res.statusCode = 304
    headForWrappers(res)
    res.end()
    return
  }
  res.statusCode = 200
  res.setHeader('Content-Type', 'text/html; charset=utf-8')
  res.setHeader('Content-Length', page.body.length)
  res.setHeader('X-Content-Type-Options', 'nosniff')
  // An owner-customised page keeps a policy the site's customHeaders set.
  if (!page.custom || !res.hasHeader('Content-Security-Policy')) {
    res.setHeader('Content-Security-Policy', page.csp)
  }
  headForWrappers(res)
  res.end(req.method === 'HEAD' ? undefined : page.body)
}

module.exports = { createListingStage }
