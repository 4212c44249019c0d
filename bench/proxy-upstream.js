'use strict'

// The upstream of the proxy rows: one bare Node process answering every
// request with 1 KiB of text, the application a proxy stands in front of.
// svr's `proxy` route, nginx's proxy_pass and the 3.x proxy mod of the
// mod variant all forward to it; svr's cached route fills its entry from it.

const http = require('node:http')

const BODY = Buffer.alloc(1024, 'x')

http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': BODY.length })
  res.end(BODY)
}).listen(Number(process.argv[2]), '127.0.0.1', function () {
  console.log('listening on http://127.0.0.1:' + this.address().port)
})

process.on('SIGTERM', () => process.exit(0))
