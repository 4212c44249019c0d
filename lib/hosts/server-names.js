'use strict'

const REGEX_SPECIAL = /[\\^$.*+?()[\]{}|]/g

/**
 * SVR.JS accepted "name:port" keys; a TLS server name never carries a port.
 * @param {string} name an `sni` key
 * @returns {string} the name without a port
 */
function hostPart (name) {
  const colon = name.lastIndexOf(':')
  return colon !== -1 && name.indexOf(':') === colon ? name.slice(0, colon) : name
}

/**
 * Compile a wildcard name at boot. "*" alone is one whole label; inside a
 * label ("img*.example.com") it stands for the rest of that label only.
 * @param {string} host lower-case name without port
 * @returns {RegExp} anchored, without g/y state
 */
function wildcardPattern (host) {
  const labels = host.split('.').map((label) => {
    if (label === '*') return '[^.]+'
    return label.split('*').map((part) => part.replace(REGEX_SPECIAL, '\\$&')).join('[^.]*')
  })
  return new RegExp('^' + labels.join('\\.') + '$')
}

module.exports = { hostPart, wildcardPattern }
