'use strict'

// Application code written the way SVR.JS 3.x users write it, for the
// drop-in tests of a checkout and of an installed tree.

// Written the way SVR.JS's shipped example script is: a request counter in
// `__dirname + "/../temp/requestCounter"`, created when missing, and a
// small forward proxy at /proxy.svr/this/<path> that fetches <path> from
// this same server with http.request and filterHeaders.
const EXAMPLE_SCRIPT = `
disableEndElseCallbackExecute = true
if (href == '/hello.svr') {
  var counterFile = __dirname + '/../temp/requestCounter'
  var count = 0
  try {
    count = parseInt(fs.readFileSync(counterFile).toString()) + 1
  } catch (err) {
    count = 0
  }
  fs.writeFileSync(counterFile, count.toString())
  res.writeHead(200, 'OK', { 'Content-Type': 'text/plain' })
  res.end('Hello World! This page was visited ' + count + ' times.')
} else if (href.indexOf('/proxy.svr/this/') == 0) {
  var target = href.slice('/proxy.svr/this'.length) + search
  var headers = filterHeaders(req.headers)
  var upstream = http.request({
    host: '127.0.0.1',
    port: req.socket.localPort,
    path: target,
    method: req.method,
    headers: headers
  }, function (answer) {
    res.writeHead(answer.statusCode, filterHeaders(answer.headers))
    answer.pipe(res)
  })
  upstream.on('error', function (err) {
    callServerError(502, 'test-proxy', err)
  })
  req.pipe(upstream)
} else {
  elseCallback()
}
`

// A 3.x mod that keeps its settings beside config.json, as the public
// reverse-proxy mod does, writing {} there when the file is missing.
const CONFIG_MOD = `
const fs = require('fs')
const configFile = __dirname + '/../../../x-config.json'
function Mod () {
  if (!fs.existsSync(configFile)) fs.writeFileSync(configFile, '{}')
  this.settings = JSON.parse(fs.readFileSync(configFile, 'utf8'))
}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback) {
  const settings = this.settings
  return function () {
    if (href === '/x-settings') {
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ settings: settings, mime: require('mime-types').lookup('a.css') }))
      return
    }
    elseCallback()
  }
}
module.exports = Mod
`

module.exports = { EXAMPLE_SCRIPT, CONFIG_MOD }
