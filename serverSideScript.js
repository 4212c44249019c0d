// serverSideScript.js — application code run by svr for every request that
// passed the access rules, before static files. This file is in the SVR.JS
// form: its top-level statements run per request with req, res, href,
// elseCallback and the other SVR.JS names in scope (see docs/scripts.md).
//
// As shipped it handles nothing, so every request goes on to the static
// files of the webroot. An example to start from:
//
// if (href === '/hello') {
//   res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' })
//   res.end('Hello from svr\n')
//   return // handled: do not go on to static files
// }
