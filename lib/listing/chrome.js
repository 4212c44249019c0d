'use strict'

const path = require('node:path')
const { createFileCache } = require('../util/file-cache')

/**
 * What frames a directory listing besides its entries: the directory's
 * header and footer (`.dirhead` or `HEAD.html`, `.dirfoot` or `FOOT.html`),
 * its `.maindesc`, and, with `enableDirectoryListingWithDefaultHead`, the
 * site's head and foot. The files are read at most once per `ttl` ms; a
 * file that cannot be read counts as empty, with a warning.
 * @param {{site: string|null, ttl: number, log: {warn: Function}}} options
 *   site: the webroot whose `.head`/`head.html` and `.foot`/`foot.html` frame every listing, or null
 * @returns {(dir: string) => Promise<Chrome>}
 */
function createChromeReader ({ site, ttl, log }) {
  const files = createFileCache({ ttl, maxEntries: 1024 })

  function readOptional (file) {
    return files.get(file).then(
      (text) => text === null ? '' : text,
      (err) => {
        log.warn('cannot read ' + file + ' for a directory listing: ' + err.message)
        return ''
      })
  }

  async function readFirst (dir, first, second) {
    const text = await readOptional(path.join(dir, first))
    return text !== '' ? text : readOptional(path.join(dir, second))
  }

  return async function readChrome (dir) {
    const [dirhead, headHtml, dirfoot, footHtml, maindesc, siteHead, siteFoot] = await Promise.all([
      readOptional(path.join(dir, '.dirhead')),
      readOptional(path.join(dir, 'HEAD.html')),
      readOptional(path.join(dir, '.dirfoot')),
      readOptional(path.join(dir, 'FOOT.html')),
      readOptional(path.join(dir, '.maindesc')),
      site === null ? '' : readFirst(site, '.head', 'head.html'),
      site === null ? '' : readFirst(site, '.foot', 'foot.html')
    ])
    const chrome = { head: dirhead || headHtml, foot: dirfoot || footHtml, maindesc, siteHead, siteFoot: '' }
    // The site's frame is used only when there is a site head to open it.
    if (siteHead !== '') chrome.siteFoot = siteFoot
    return chrome
  }
}

/**
 * @typedef {{head: string, foot: string, maindesc: string, siteHead: string, siteFoot: string}} Chrome
 */

/**
 * @param {Chrome} a
 * @param {Chrome} b
 * @returns {boolean} whether a page built with `a` still shows `b`
 */
function sameChrome (a, b) {
  return a.head === b.head && a.foot === b.foot && a.maindesc === b.maindesc &&
    a.siteHead === b.siteHead && a.siteFoot === b.siteFoot
}

module.exports = { createChromeReader, sameChrome }
