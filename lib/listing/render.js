'use strict'

const crypto = require('node:crypto')
const { setImmediate: nextTurn } = require('node:timers/promises')
const { escapeHtml } = require('../util/escape-html')
const { iconFor, iconTitle, iconCss } = require('./icons')

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB']
// Rows rendered per event-loop turn: a 10,000-entry listing takes some
// 100 ms of string work on a busy machine, which must not hold up every
// other request of the worker.
const ROWS_PER_TURN = 500
const FULL_DOCUMENT = /<html[\s>]/i
const HEAD_END = /<\/head\s*>/i
const HAS_TITLE = /<title[\s>]/i

const PAGE_CSS = ':root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--line:#d8dee4;--hover:#f3f5f7;--link:#0b5cad}' +
  '@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#30363d;--hover:#161b22;--link:#58a6ff}}' +
  'body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg)}' +
  'main{max-width:60rem;margin:0 auto;padding:1rem}' +
  'h1{font-size:1.3rem;font-weight:600;margin:.5rem 0 1rem;overflow-wrap:anywhere}' +
  '#listing{width:100%;border-collapse:collapse}' +
  '#listing th{text-align:left;font-weight:600;color:var(--muted);border-bottom:2px solid var(--line);padding:.35rem .5rem}' +
  '#listing td{border-bottom:1px solid var(--line);padding:.35rem .5rem;vertical-align:middle}' +
  '#listing tbody tr:hover{background:var(--hover)}' +
  '#listing td.nm{overflow-wrap:anywhere;word-break:break-word;width:100%}' +
  '#listing a{color:var(--link);text-decoration:none}#listing a:hover{text-decoration:underline}' +
  '#listing .sz,#listing .dt{white-space:nowrap;color:var(--muted);font-variant-numeric:tabular-nums}' +
  '#listing .sz{text-align:right}' +
  '.ic{width:24px;min-width:24px;padding-right:0!important;background:no-repeat center/22px 22px}' +
  '.broken{color:var(--muted);text-decoration:line-through}' +
  '.vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}' +
  '.sig{color:var(--muted);font-size:.85rem;margin-top:1.5rem}footer{max-width:60rem;margin:0 auto;padding:0 1rem}' +
  '@media (max-width:34rem){#listing .dt{display:none}main,footer{padding:.5rem}}'

/**
 * For a listing that carries the site owner's HTML (head, foot, description):
 * their stylesheets, images and scripts from the site itself work, nothing
 * from elsewhere loads.
 */
const CUSTOM_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'"

/**
 * @param {number} bytes
 * @returns {string} e.g. '512 B', '1.5 KiB', '12 MiB'
 */
function formatSize (bytes) {
  if (bytes < 1024) return bytes + ' B'
  let value = bytes / 1024
  let unit = 0
  // 1023.6 KiB would round to "1024 KiB".
  while (value >= 1023.5 && unit < UNITS.length - 1) {
    value /= 1024
    unit++
  }
  return (value < 10 ? Math.round(value * 10) / 10 : Math.round(value)) + ' ' + UNITS[unit]
}

/**
 * An href for a name in the current directory: percent-encoded, so that
 * `#`, `?`, `%` and `:` stay part of the name, then escaped for the
 * attribute.
 * @param {string} name
 * @param {boolean} dir
 * @returns {string|null} null when the name cannot be encoded (lone surrogate)
 */
function entryHref (name, dir) {
  let encoded
  try {
    encoded = encodeURIComponent(name)
  } catch {
    return null
  }
  return escapeHtml(encoded) + (dir ? '/' : '')
}

function entryRow (entry, prefix, icons) {
  const icon = iconFor(entry)
  icons.add(icon)
  const dir = entry.kind === 'dir'
  const text = escapeHtml(entry.name) + (dir ? '/' : '')
  const href = entry.kind === 'broken' ? null : entryHref(entry.name, dir)
  const name = href === null
    ? '<span class="broken">' + text + '</span> (broken link)'
    : '<a href="' + prefix + href + '">' + text + '</a>'
  const size = entry.size < 0 ? '-' : formatSize(entry.size)
  return '<tr><td class="ic i-' + icon + '" title="' + iconTitle(icon) + '"></td><td class="nm">' + name +
    '</td><td class="sz">' + size + '</td><td class="dt">' + formatDate(entry.mtimeMs) + '</td></tr>\n'
}

function formatDate (mtimeMs) {
  if (mtimeMs < 0) return '-'
  const iso = new Date(mtimeMs).toISOString()
  return '<time datetime="' + iso.slice(0, 19) + 'Z">' + iso.slice(0, 10) + ' ' + iso.slice(11, 16) + '</time>'
}

/**
 * The listing proper: heading, table, and the owner's description, built a
 * slice of rows per event-loop turn.
 * @returns {Promise<string>}
 */
async function renderMain (title, atRoot, hrefPrefix, entries, maindesc, icons) {
  const prefix = escapeHtml(hrefPrefix)
  const parts = ['<main><h1>', title, '</h1>\n<table id="listing"><thead><tr><th class="ic"><span class="vh">Type</span></th>',
    '<th>Name</th><th class="sz">Size</th><th class="dt">Modified (UTC)</th></tr></thead><tbody>\n']
  if (!atRoot) {
    icons.add('up')
    parts.push('<tr><td class="ic i-up" title="' + iconTitle('up') + '"></td><td class="nm"><a href="' +
      (prefix === '' ? '../' : './') + '">../</a></td><td class="sz">-</td><td class="dt"></td></tr>\n')
  }
  for (let start = 0; start < entries.length; start += ROWS_PER_TURN) {
    if (start !== 0) await nextTurn()
    const end = Math.min(start + ROWS_PER_TURN, entries.length)
    let rows = ''
    for (let i = start; i < end; i++) rows += entryRow(entries[i], prefix, icons)
    parts.push(rows)
  }
  parts.push('</tbody></table>\n')
  if (maindesc !== '') parts.push('<hr>\n', maindesc, '\n')
  parts.push('</main>\n')
  return parts.join('')
}

function withTitle (head, titleTag) {
  if (HAS_TITLE.test(head)) return head
  const end = head.search(HEAD_END)
  return end === -1 ? head : head.slice(0, end) + titleTag + head.slice(end)
}

/**
 * Render a directory listing page.
 * @param {object} page
 * @param {string} page.path the directory's decoded URL path, for the title
 * @param {boolean} page.atRoot no parent link
 * @param {string} page.hrefPrefix percent-encoded path the entries' links
 *   start with: '' when the page's URL ends in `/`, else the directory's name and `/`
 * @param {import('./read').ListingEntry[]} page.entries sorted
 * @param {string} page.server the signature line (server string)
 * @param {{head: string, foot: string, maindesc: string, siteHead: string, siteFoot: string}} page.chrome
 *   trusted HTML from the site owner; '' when absent. siteHead/siteFoot are
 *   only set when the site's own frame replaces the built-in one.
 * @returns {Promise<{html: string, csp: string, custom: boolean}>}
 */
async function renderListing ({ path, atRoot, hrefPrefix, entries, server, chrome }) {
  const title = 'Index of ' + escapeHtml(path)
  const titleTag = '<title>' + title + '</title>'
  const signature = '<p class="sig"><em>' + escapeHtml(server) + '</em></p>\n'
  const icons = new Set()
  const main = await renderMain(title, atRoot, hrefPrefix, entries, chrome.maindesc, icons)
  const css = PAGE_CSS + iconCss(icons)
  const style = '<style>' + css + '</style>'
  let parts
  if (chrome.siteHead !== '') {
    // enableDirectoryListingWithDefaultHead: the site's frame around it all.
    parts = [withTitle(chrome.siteHead, titleTag), chrome.head, style, main, chrome.foot, signature, chrome.siteFoot]
  } else if (FULL_DOCUMENT.test(chrome.head)) {
    // The directory's header is a document start of its own.
    parts = [withTitle(chrome.head, titleTag), style, main, signature, chrome.foot === '' ? '</body></html>\n' : chrome.foot]
  } else {
    parts = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
      '<meta name="viewport" content="width=device-width, initial-scale=1">',
      // An empty icon: browsers would otherwise ask for /favicon.ico.
      '<link rel="icon" href="data:,">', titleTag, style, '</head>\n<body>\n',
      chrome.head, main, chrome.foot, '<footer>', signature, '</footer></body></html>\n']
  }
  const custom = chrome.head !== '' || chrome.foot !== '' || chrome.maindesc !== '' || chrome.siteHead !== ''
  return { html: parts.join(''), csp: custom ? CUSTOM_CSP : strictCsp(css), custom }
}

/**
 * The listing's own Content-Security-Policy: nothing may load but its one
 * inline stylesheet (allowed by hash) and the data: icons that draws.
 * @param {string} css
 * @returns {string}
 */
function strictCsp (css) {
  const hash = crypto.createHash('sha256').update(css).digest('base64')
  return "default-src 'none'; style-src 'sha256-" + hash + "'; img-src data:; base-uri 'none'; form-action 'none'"
}

module.exports = { renderListing, formatSize, entryHref, CUSTOM_CSP }
