'use strict'

const path = require('node:path')

/**
 * @param {string} root absolute webroot
 * @param {string} decoded decoded, sanitized path starting with '/'
 * @param {boolean} [plain] whether it is plain (lib/paths/sanitize-path.js
 *   pathForm): known to have no dot segment and no empty one
 * @returns {string}
 */
function toFsPath (root, decoded, plain = false) {
  // What path.join would return, without its normalizing pass, for the
  // usual path: no dot segment, no empty segment, a root without a
  // trailing slash (path.resolve gives one, except for '/').
  if ((plain || (decoded.indexOf('/.') === -1 && decoded.indexOf('//') === -1)) && root.length > 1 &&
      root.charCodeAt(root.length - 1) !== 47 /* / */) {
    return root + decoded
  }
  return path.join(root, decoded)
}

module.exports = { toFsPath }
