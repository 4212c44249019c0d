'use strict'

const crypto = require('node:crypto')

const ENTITIES = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&amp;': '&' }

/**
 * Undo escapeHtml (the five entities it writes).
 * @param {string} text
 * @returns {string}
 */
function unescapeHtml (text) {
  return text.replace(/&(?:lt|gt|quot|#39|amp);/g, (entity) => ENTITIES[entity])
}

/**
 * The name cells of a listing page, in order.
 * @param {string} html
 * @returns {{href: string|null, text: string}[]} href and text unescaped;
 *   href null for an entry shown without a link
 */
function listingRows (html) {
  const rows = []
  for (const match of html.matchAll(/<td class="nm">(.*?)<\/td>/g)) {
    const link = /^<a href="([^"]*)">([^<]*)<\/a>$/.exec(match[1])
    if (link !== null) {
      rows.push({ href: unescapeHtml(link[1]), text: unescapeHtml(link[2]) })
    } else {
      rows.push({ href: null, text: unescapeHtml(match[1].replace(/<[^>]*>/g, '')) })
    }
  }
  return rows
}

/**
 * Whether a page's inline stylesheets are all allowed by the hashes in its
 * Content-Security-Policy.
 * @param {string} html
 * @param {string} csp
 * @returns {boolean}
 */
function stylesMatchCsp (html, csp) {
  const styles = [...html.matchAll(/<style>([^<]*)<\/style>/g)]
  if (styles.length === 0) return false
  return styles.every((match) => {
    const hash = crypto.createHash('sha256').update(match[1]).digest('base64')
    return csp.includes("'sha256-" + hash + "'")
  })
}

module.exports = { unescapeHtml, listingRows, stylesMatchCsp }
