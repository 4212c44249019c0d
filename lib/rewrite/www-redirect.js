'use strict'

const PORT = /^[0-9]{1,5}$/

/**
 * `wwwredirect`: a request whose Host is `domain` goes to `www.` + domain.
 * The target host is the configured name, never the client's Host header,
 * and the port is copied only when it is a number.
 * @param {object} config validated configuration
 * @returns {((req, ctx) => string|null) | null} null when off or when `domain`
 *   is empty or already starts with `www.`
 */
function compileWwwRedirect (config) {
  if (!config.wwwredirect) return null
  const domain = config.domain.toLowerCase().replace(/\.+$/, '')
  if (domain === '' || domain.startsWith('www.')) return null
  const target = 'www.' + domain
  return function wwwLocation (req, ctx) {
    // ctx.hostname is '' without a Host header: no match (SVR.JS answered 500).
    if (ctx.hostname !== domain) return null
    return (req.socket.encrypted ? 'https://' : 'http://') + target + hostPort(req.headers.host) + req.url
  }
}

function hostPort (host) {
  const colon = host.lastIndexOf(':')
  if (colon === -1) return ''
  const port = host.slice(colon + 1)
  return PORT.test(port) ? ':' + port : ''
}

module.exports = { compileWwwRedirect }
