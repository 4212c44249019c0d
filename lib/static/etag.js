'use strict'

/**
 * A strong, quoted entity tag for a file (RFC 9110 §8.8.3): inode, size and
 * modification time in microseconds. send's own tag is weak (`W/"…"`), and a
 * weak tag can never satisfy If-Match or If-Range, which need the strong
 * comparison. The suffix tells coded representations apart, so that a cache
 * never takes a gzip body for the identity one.
 * @param {import('node:fs').Stats} stat
 * @param {string} suffix '' for the file as stored, '-br' or '-gz' for a coded representation
 * @returns {string}
 */
function strongEtag (stat, suffix) {
  return '"' + stat.ino.toString(16) + '-' + stat.size.toString(16) + '-' +
    Math.floor(stat.mtimeMs * 1000).toString(16) + suffix + '"'
}

/**
 * Whether an If-Match or If-None-Match value lists the tag (RFC 9110 §13.1.1,
 * §13.1.2). `*` matches any current representation.
 * @param {string} header the field value: `*` or a list of entity tags
 * @param {string|null} etag the representation's strong tag, null when tags are off
 * @param {boolean} weak true: weak comparison (If-None-Match), `W/` is ignored;
 *   false: strong comparison (If-Match), a `W/` tag never matches
 * @returns {boolean}
 */
function etagListMatches (header, etag, weak) {
  const len = header.length
  let i = 0
  while (i < len) {
    const c = header.charCodeAt(i)
    if (c === 0x20 || c === 0x09 || c === 0x2c /* , */) {
      i++
      continue
    }
    if (c === 0x2a /* * */) return true
    let isWeak = false
    if (c === 0x57 /* W */ && header.charCodeAt(i + 1) === 0x2f /* / */) {
      isWeak = true
      i += 2
    }
    if (header.charCodeAt(i) !== 0x22 /* " */) {
      // Not an entity tag: skip to the next list member.
      const comma = header.indexOf(',', i)
      if (comma === -1) return false
      i = comma + 1
      continue
    }
    const close = header.indexOf('"', i + 1)
    if (close === -1) return false
    if (etag !== null && (weak || !isWeak) && close + 1 - i === etag.length && header.startsWith(etag, i)) return true
    i = close + 1
  }
  return false
}

module.exports = { strongEtag, etagListMatches }
