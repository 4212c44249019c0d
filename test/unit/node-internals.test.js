'use strict'

// svr relies on a few private interfaces of Node.js (docs/architecture.md,
// "Private Node.js interfaces"). Each test below uses one the way svr does,
// directly on the Node that runs the tests, so that a Node release that
// changes or removes it fails here with its name, instead of somewhere deep
// in a cluster test. CI runs this file on every Node version it supports.

const { describe, it, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const Module = require('node:module')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const tls = require('node:tls')
const util = require('node:util')
const selfsigned = require('selfsigned')

const ROOT = path.join(__dirname, '..', '..')
const SEE = 'see "Private Node.js interfaces" in docs/architecture.md'

/**
 * Every private interface svr uses: the name `._x` it is reached by (null
 * when it has none), the file that uses it, and what for.
 */
const INTERFACES = {
  createServerHandle: { name: '_createServerHandle', file: 'lib/primary/listen-sockets.js', what: 'net._createServerHandle', why: 'bind the listening sockets the primary keeps while workers come and go' },
  listen2: { name: '_listen2', file: 'lib/worker/listen-on-handle.js', what: 'server._handle = handle; server._listen2()', why: 'make a worker\'s server listen on a socket the primary bound' },
  handle: { name: '_handle', file: 'lib/worker/listen-on-handle.js', what: 'server._handle', why: 'make a worker\'s server listen on a socket the primary bound' },
  sendHandle: { name: null, file: 'lib/ipc.js', what: 'worker.send(message, handle) with a raw TCP or Pipe handle', why: 'hand the primary\'s bound sockets to every worker' },
  dispatch: { name: null, file: 'lib/primary/connection-dispatch.js', what: 'a client handle sent over IPC, and onconnection of the object a worker\'s server adopted', why: 'hand a connection one worker passed on to another' },
  pass: { name: null, file: 'lib/worker/shared-port.js', what: 'handle.listen() and handle.onconnection of a bound handle, under the object a worker\'s server adopted, and process.send(message, handle, callback) from a child to its parent', why: 'pass a connection a worker would hold too many of to the primary, before a byte of it is read' },
  feed: { name: null, file: 'lib/primary/connection-feed.js', what: 'handle.listen() and handle.onconnection of a bound handle and of a handle a server adopts', why: 'feed one socket\'s connections to the newest in-process worker (--single-threaded)' },
  httpMessage: { name: '_httpMessage', file: 'lib/worker/client-error.js', what: 'socket._httpMessage', why: 'answer a malformed request only after the responses pipelined before it' },
  parent: { name: '_parent', file: 'lib/worker/client-error.js', what: 'tlsSocket._parent', why: 'answer plain HTTP on the TLS port with 497 in cleartext' },
  alpn: { name: '_handle', file: 'lib/tls/options.js', what: 'this._handle.getALPNNegotiatedProtocol() inside SNICallback', why: 'tell a tls-alpn-01 validation from a browser before choosing the certificate' },
  alpnList: { name: null, file: 'lib/tls/options.js', what: 'server.ALPNProtocols (the encoded list of a TLS server)', why: 'accept acme-tls/1 on an HTTP/2 or HTTPS server for tls-alpn-01' },
  implicitHeader: { name: '_implicitHeader', file: 'lib/pipeline/request/tolerant-response.js', what: 'http.ServerResponse.prototype._implicitHeader', why: 'give mods that wrap writeHead every header field, as SVR.JS did' },
  finish: { name: '_finish', file: 'lib/pipeline/request/tolerant-response.js', what: 'http.ServerResponse.prototype._finish', why: 'mark where the bytes of an HTTP/1.1 answer end for the access log without a listener per response' },
  outHeaders: { name: null, file: 'lib/pipeline/request/known-fields.js', what: 'a response\'s field table under the symbol described \'kOutHeaders\' (lower-case name → [name, value], null until a field is set)', why: 'set and read header fields without lower-casing the name on every call' },
  header: { name: '_header', file: 'lib/pipeline/request/response-bytes.js', what: 'res._header', why: 'count the body bytes of an HTTP/1.1 answer for the access log' },
  bytesDispatched: { name: '_bytesDispatched', file: 'lib/pipeline/request/response-bytes.js', what: 'socket._bytesDispatched', why: 'read a connection\'s bytes written for the access log without Node\'s getter copying its write queue' },
  pendingData: { name: '_pendingData', file: 'lib/pipeline/request/response-bytes.js', what: 'socket._pendingData (null unless a write waits for the connection to be made)', why: 'tell when socket._bytesDispatched is the whole of bytesWritten' },
  initPaths: { name: '_initPaths', file: 'lib/application/process-environment.js', what: 'Module._initPaths', why: 'let application code require svr\'s packages with --single-threaded' },
  nodeModulePaths: { name: '_nodeModulePaths', file: 'lib/application/fresh-module.js', what: 'Module._nodeModulePaths', why: 'load the script and mods afresh on each reload with --single-threaded' },
  compile: { name: '_compile', file: 'lib/application/fresh-module.js', what: 'module._compile', why: 'load the script and mods afresh on each reload with --single-threaded' }
}

/**
 * Run `check`; when it fails, fail with what svr loses.
 * @param {string} key of INTERFACES
 * @param {() => any} check
 */
async function holds (key, check) {
  try {
    await check()
  } catch (err) {
    // A failure in a step shared with another interface's test names that one.
    const { what, file, why } = INTERFACES[err.interfaceKey || key]
    const gone = err.code === 'ERR_ASSERTION' && /^missing: /.test(err.message)
    const message = `Node ${process.version} ${gone ? 'no longer has' : 'changed'} ${what}, used by ${file} to ${why} — ${SEE}` +
      (gone ? '' : ` (${err.message})`)
    throw new assert.AssertionError({ message })
  }
}

function present (value, name) {
  assert.ok(value !== undefined && value !== null, 'missing: ' + name)
}

function presentFunction (value, name) {
  assert.equal(typeof value, 'function', 'missing: ' + name)
}

function once (emitter, event) {
  return new Promise((resolve, reject) => {
    emitter.once(event, resolve)
    if (event !== 'error') emitter.once('error', reject)
  })
}

// Everything a connection to 127.0.0.1:port (or a unix socket) receives after sending `send`.
function exchange (target, send = '') {
  return new Promise((resolve, reject) => {
    const socket = net.connect(target, () => socket.end(send))
    let text = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk) => { text += chunk })
    socket.on('end', () => resolve(text))
    socket.on('error', reject)
  })
}

function listening (server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
}

function closing (server) {
  return new Promise((resolve) => server.close(() => resolve()))
}

// A TCP handle bound (not listening) to a free loopback port, as lib/primary/listen-sockets.js makes them.
function boundHandle () {
  try {
    presentFunction(net._createServerHandle, 'net._createServerHandle')
    const handle = net._createServerHandle('127.0.0.1', 0, 4)
    assert.equal(typeof handle, 'object', 'a handle, not the error number ' + handle)
    const address = {}
    assert.equal(handle.getsockname(address), 0)
    assert.equal(address.address, '127.0.0.1')
    assert.ok(address.port > 0)
    return { handle, port: address.port }
  } catch (err) {
    err.interfaceKey = 'createServerHandle'
    throw err
  }
}

let pems = null
async function certificate () {
  if (pems === null) {
    pems = await selfsigned.generate([{ name: 'commonName', value: 'internals.example' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' })
  }
  return { cert: pems.cert, key: pems.private }
}

describe('private Node.js interfaces svr relies on', () => {
  it('net._createServerHandle binds a TCP socket and a unix socket without listening, and reports an address in use', () => holds('createServerHandle', async () => {
    const { handle, port } = boundHandle()
    // Bound but not listening: a connection is refused.
    await assert.rejects(exchange({ host: '127.0.0.1', port }), { code: 'ECONNREFUSED' })
    handle.close()
    // A port another server listens on: svr's bindSpec reads EADDRINUSE
    // from the number returned, or from getsockname (libuv defers it).
    const other = net.createServer()
    const taken = await listening(other)
    try {
      const again = net._createServerHandle('127.0.0.1', taken, 4)
      let errno = again
      if (typeof again === 'object') {
        errno = again.getsockname({})
        again.close()
      }
      assert.equal(util.getSystemErrorName(errno), 'EADDRINUSE')
    } finally {
      await closing(other)
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svr-internals-'))
    after(() => fs.rmSync(dir, { recursive: true, force: true }))
    const pipe = net._createServerHandle(path.join(dir, 'svr.sock'), -1, -1)
    assert.equal(typeof pipe, 'object', 'a Pipe handle, not the error number ' + pipe)
    assert.ok(fs.statSync(path.join(dir, 'svr.sock')).isSocket())
    pipe.close()
  }))

  it('a net.Server adopts a bound handle through server._handle and server._listen2, TCP and unix socket', () => holds('listen2', async () => {
    presentFunction(net.Server.prototype._listen2, 'net.Server.prototype._listen2')
    const { handle, port } = boundHandle()
    const server = net.createServer((socket) => socket.end('adopted'))
    // lib/worker/listen-on-handle.js listenOnHandle
    const up = once(server, 'listening')
    server._handle = handle
    server._listen2(null, -1, -1)
    await up
    assert.equal(server.address().port, port)
    assert.equal(await exchange({ host: '127.0.0.1', port }), 'adopted')
    await closing(server)
    await assert.rejects(exchange({ host: '127.0.0.1', port }), { code: 'ECONNREFUSED' })

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svr-internals-'))
    after(() => fs.rmSync(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'svr.sock')
    const pipeServer = net.createServer((socket) => socket.end('adopted pipe'))
    const pipeUp = once(pipeServer, 'listening')
    pipeServer._handle = net._createServerHandle(file, -1, -1)
    pipeServer._listen2(null, -1, -1)
    await pipeUp
    assert.equal(await exchange(file), 'adopted pipe')
    await closing(pipeServer)
  }))

  it('a child process receives a raw bound TCP handle sent over IPC and serves on it', () => holds('sendHandle', async () => {
    const { handle, port } = boundHandle()
    // What a worker does with the "listen" message (lib/worker/worker.js, lib/worker/listen-on-handle.js).
    const child = spawn(process.execPath, ['-e', `
      const net = require('node:net')
      process.on('message', (msg, handle) => {
        if (handle === undefined || typeof handle.getsockname !== 'function') {
          process.send({ error: 'no handle came with the message: ' + typeof handle })
          return
        }
        const server = net.createServer((socket) => socket.end('served by the child'))
        server.once('listening', () => process.send({ port: server.address().port }))
        server._handle = handle
        server._listen2(null, -1, -1)
      })
      process.on('disconnect', () => process.exit(0))
    `], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    try {
      const reply = new Promise((resolve, reject) => {
        child.once('message', resolve)
        child.once('exit', (code, signal) => reject(new Error(`the child exited (${code || signal}) before it answered`)))
      })
      child.send({ act: 'listen' }, handle)
      const answer = await reply
      assert.equal(answer.error, undefined, answer.error)
      assert.equal(answer.port, port)
      assert.equal(await exchange({ host: '127.0.0.1', port }), 'served by the child')
    } finally {
      child.kill()
      handle.close()
    }
  }))

  it('a bound handle listens with handle.listen() and hands its connections through onconnection to a server that adopted another object', () => holds('feed', async () => {
    const { handle, port } = boundHandle()
    // lib/primary/connection-feed.js: the server adopts a ConnectionPort; Node sets
    // its onconnection, which the feed calls with the accepted client.
    const adopted = {
      onconnection: null,
      getsockname (out) { return handle.getsockname(out) },
      listen () { return 0 },
      close (callback) { if (typeof callback === 'function') process.nextTick(callback) },
      ref () {},
      unref () {}
    }
    const server = net.createServer((socket) => socket.end('fed'))
    const up = once(server, 'listening')
    server._handle = adopted
    server._listen2(null, -1, -1)
    await up
    presentFunction(adopted.onconnection, 'the onconnection Node sets on an adopted handle')
    handle.onconnection = (err, client) => adopted.onconnection(err, client)
    assert.equal(handle.listen(511), 0)
    assert.equal(server.address().port, port)
    assert.equal(await exchange({ host: '127.0.0.1', port }), 'fed')
    const count = await new Promise((resolve, reject) => server.getConnections((err, n) => err ? reject(err) : resolve(n)))
    assert.ok(count <= 1)
    await closing(server)
    handle.close()
  }))

  it('a client handle accepted in the parent is sent over IPC and served by a child\'s server through the onconnection of the object it adopted', () => holds('dispatch', async () => {
    const { handle, port } = boundHandle()
    // lib/worker/shared-port.js (take) in the child, lib/primary/connection-dispatch.js here.
    const child = spawn(process.execPath, ['-e', `
      const net = require('node:net')
      const port = { onconnection: null, listen () { return 0 }, close (cb) { if (cb) process.nextTick(cb) }, ref () {}, unref () {} }
      const server = net.createServer((socket) => socket.end('handed to the child'))
      server.once('listening', () => process.send({ ready: typeof port.onconnection }))
      server._handle = port
      server._listen2(null, -1, -1)
      process.on('message', (msg, client) => {
        if (client === undefined) return process.send({ error: 'no handle came with the message' })
        port.onconnection(0, client)
        process.send({ taken: msg.id })
      })
      process.on('disconnect', () => process.exit(0))
    `], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    try {
      const ready = await once(child, 'message')
      assert.equal(ready.ready, 'function')
      // The parent closes its own descriptor once the child has taken the connection.
      const taken = new Promise((resolve) => {
        handle.onconnection = (err, client) => {
          assert.equal(err, 0)
          child.send({ id: 1 }, client, () => {})
          child.once('message', (msg) => {
            client.close()
            resolve(msg)
          })
        }
      })
      assert.equal(handle.listen(511), 0)
      assert.equal(await exchange({ host: '127.0.0.1', port }), 'handed to the child')
      assert.deepEqual(await taken, { taken: 1 })
    } finally {
      child.kill()
      handle.close()
    }
  }))

  it('a worker accepting on a shared socket through the object its server adopted passes a connection to its parent, where it is served', () => holds('pass', async () => {
    const { handle, port } = boundHandle()
    // What lib/worker/worker.js makes of the 'listen' message in a cluster
    // worker, with a balance that passes every connection on.
    const lib = (file) => JSON.stringify(path.join(__dirname, '../../lib', file))
    const child = spawn(process.execPath, ['-e', `
      const net = require('node:net')
      const { SharedPort } = require(${lib('worker/shared-port.js')})
      const { primaryPeer } = require(${lib('ipc.js')})
      const { listenOnHandle } = require(${lib('worker/listen-on-handle.js')})
      const server = net.createServer((socket) => socket.end('kept by the child'))
      process.on('message', (msg, handle) => {
        const shared = new SharedPort('main', handle, primaryPeer(process), { shouldPass: () => true })
        const accepted = shared.accepted.bind(shared)
        shared.accepted = (err, client) => {
          const close = client.close.bind(client)
          client.close = (callback) => { process.send({ closed: true }); close(callback) }
          accepted(err, client)
        }
        listenOnHandle(server, shared).then(() => process.send({ listening: server.address().port }))
      })
      process.on('disconnect', () => process.exit(0))
    `], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    try {
      const messages = []
      child.on('message', (msg, client) => {
        messages.push(msg.act || Object.keys(msg)[0])
        if (msg.act === 'conn-pass') new net.Socket({ handle: client, readable: true, writable: true }).end('passed to the parent')
      })
      child.send({ act: 'listen' }, handle)
      while (messages.length < 2) await once(child, 'message')
      assert.deepEqual(messages, ['port-open', 'listening'])
      assert.equal(await exchange({ host: '127.0.0.1', port }), 'passed to the parent')
      // The child's copy is closed once the message carrying it is written.
      while (messages.length < 4) await once(child, 'message')
      assert.deepEqual(messages, ['port-open', 'listening', 'conn-pass', 'closed'])
    } finally {
      child.kill()
      handle.close()
    }
  }))

  it('socket._httpMessage is the response being written, and is cleared when it finishes', () => holds('httpMessage', async () => {
    const seen = []
    const server = http.createServer((req, res) => {
      const during = req.socket._httpMessage
      res.on('finish', () => setImmediate(() => seen.push({ during: during === res, after: req.socket._httpMessage })))
      res.end('ok')
    })
    const port = await listening(server)
    try {
      const text = await exchange({ host: '127.0.0.1', port }, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.match(text, /^HTTP\/1\.1 200 /)
      await new Promise((resolve) => setImmediate(resolve))
      assert.equal(seen.length, 1)
      assert.equal(seen[0].during, true, 'socket._httpMessage is the response while it is written')
      assert.ok(!seen[0].after, 'socket._httpMessage is cleared once the response finished')
    } finally {
      await closing(server)
    }
  }))

  it('tlsSocket._parent is the writable TCP socket of a handshake that failed on plain HTTP', () => holds('parent', async () => {
    const server = tls.createServer(await certificate())
    const seen = []
    server.on('tlsClientError', (err, tlsSocket) => {
      const raw = tlsSocket._parent
      seen.push({ code: err.code, socket: raw instanceof net.Socket, writable: raw != null && raw.writable })
      if (raw != null && raw.writable) raw.end('HTTP/1.1 497 HTTP Request Sent to HTTPS Port\r\nConnection: close\r\n\r\n', 'latin1')
      else tlsSocket.destroy()
    })
    const port = await listening(server)
    try {
      const text = await exchange({ host: '127.0.0.1', port }, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n')
      assert.deepEqual(seen, [{ code: 'ERR_SSL_HTTP_REQUEST', socket: true, writable: true }])
      assert.match(text, /^HTTP\/1\.1 497 /)
    } finally {
      await closing(server)
    }
  }))

  it('inside SNICallback, `this` is the TLS socket and its _handle tells the ALPN protocol chosen under TLS 1.3', () => holds('alpn', async () => {
    const { cert, key } = await certificate()
    const context = tls.createSecureContext({ cert, key })
    const seen = []
    const server = tls.createServer({
      cert,
      key,
      ALPNProtocols: ['http/1.1', 'acme-tls/1'],
      // lib/tls/options.js offersAcmeTls
      SNICallback (servername, callback) {
        const handle = this._handle
        seen.push({
          socket: this instanceof tls.TLSSocket,
          protocol: handle && typeof handle.getALPNNegotiatedProtocol === 'function' ? handle.getALPNNegotiatedProtocol() : 'no getALPNNegotiatedProtocol',
          version: this.getProtocol()
        })
        callback(null, context)
      }
    }, (socket) => socket.end())
    const port = await listening(server)
    try {
      for (const ALPNProtocols of [['acme-tls/1'], undefined]) {
        await new Promise((resolve, reject) => {
          const socket = tls.connect({ host: '127.0.0.1', port, servername: 'a.example', ALPNProtocols, rejectUnauthorized: false }, () => socket.end())
          socket.on('close', resolve)
          socket.on('error', reject)
        })
      }
      assert.equal(seen.length, 2)
      assert.deepEqual(seen[0], { socket: true, protocol: 'acme-tls/1', version: 'TLSv1.3' })
      assert.equal(seen[1].socket, true)
      assert.notEqual(typeof seen[1].protocol, 'string', 'no protocol offered, none chosen')
      assert.equal(seen[1].version, 'TLSv1.3')
    } finally {
      await closing(server)
    }
  }))

  it('a TLS server keeps its ALPN list as an encoded Buffer that can be extended', () => holds('alpnList', async () => {
    const server = http2.createSecureServer({ ...(await certificate()), allowHTTP1: true }, (req, res) => res.end())
    assert.ok(Buffer.isBuffer(server.ALPNProtocols), 'server.ALPNProtocols is an encoded Buffer')
    // lib/tls/options.js offerAcmeTls
    const name = Buffer.from('acme-tls/1')
    server.ALPNProtocols = Buffer.concat([server.ALPNProtocols, Buffer.from([name.length]), name])
    const port = await listening(server)
    try {
      const protocol = await new Promise((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, servername: 'a.example', ALPNProtocols: ['acme-tls/1'], rejectUnauthorized: false }, () => {
          resolve(socket.alpnProtocol)
          socket.destroy()
        })
        socket.on('error', reject)
      })
      assert.equal(protocol, 'acme-tls/1')
    } finally {
      await closing(server)
    }
  }))

  it('Node writes the head of an answer without writeHead through the ServerResponse class\'s _implicitHeader', () => holds('implicitHeader', async () => {
    presentFunction(http.ServerResponse.prototype._implicitHeader, 'http.ServerResponse.prototype._implicitHeader')
    let calls = 0
    class Response extends http.ServerResponse {
      _implicitHeader () {
        calls++
        super._implicitHeader()
      }
    }
    const server = http.createServer({ ServerResponse: Response }, (req, res) => {
      res.setHeader('X-Set', 'one by one')
      if (req.url === '/write') res.write('wr')
      res.end('end')
    })
    const port = await listening(server)
    try {
      for (const target of ['/end', '/write']) {
        const text = await exchange({ host: '127.0.0.1', port }, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
        assert.match(text, /^HTTP\/1\.1 200 OK\r\n/)
        assert.match(text, /\r\nX-Set: one by one\r\n/)
      }
      assert.equal(calls, 2, '_implicitHeader called once per answer, from end() and from write()')
    } finally {
      await closing(server)
    }
  }))

  it('Node calls the ServerResponse class\'s _finish once per answer, as its last byte is handed to the socket and before \'prefinish\'', () => holds('finish', async () => {
    presentFunction(http.ServerResponse.prototype._finish, 'http.ServerResponse.prototype._finish')
    const seen = []
    class Response extends http.ServerResponse {
      _finish () {
        seen.push('_finish ' + this.socket.bytesWritten)
        super._finish()
      }
    }
    const server = http.createServer({ ServerResponse: Response }, (req, res) => {
      res.on('prefinish', () => seen.push('prefinish ' + res.socket.bytesWritten))
      res.end('hello')
    })
    const port = await listening(server)
    try {
      const text = await exchange({ host: '127.0.0.1', port }, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      const written = Buffer.byteLength(text)
      assert.deepEqual(seen, ['_finish ' + written, 'prefinish ' + written], 'one _finish, with the whole answer handed over, then prefinish')
    } finally {
      await closing(server)
    }
  }))

  it('a response keeps its fields under the symbol kOutHeaders, lower-case name → [name, value]', () => holds('outHeaders', async () => {
    const symbol = Object.getOwnPropertySymbols(new http.OutgoingMessage()).find((s) => s.description === 'kOutHeaders')
    present(symbol, 'the symbol kOutHeaders of an OutgoingMessage')
    const seen = {}
    const server = http.createServer((req, res) => {
      seen.before = res[symbol]
      res.setHeader('X-Node', 'set by Node')
      seen.table = Object.entries(res[symbol])
      res[symbol]['x-table'] = ['X-Table', 'set in the table']
      seen.read = res.getHeader('X-TABLE')
      seen.names = res.getRawHeaderNames()
      res.end('ok')
    })
    const port = await listening(server)
    try {
      const text = await exchange({ host: '127.0.0.1', port }, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      assert.equal(seen.before, null, 'no table before the first field')
      assert.deepEqual(seen.table, [['x-node', ['X-Node', 'set by Node']]])
      assert.equal(seen.read, 'set in the table', 'getHeader reads the table')
      assert.deepEqual(seen.names, ['X-Node', 'X-Table'])
      assert.match(text, /\r\nX-Node: set by Node\r\nX-Table: set in the table\r\n/, 'the head is written from the table')
    } finally {
      await closing(server)
    }
  }))

  it('res._header is the head exactly as written to the socket', () => holds('header', async () => {
    let head = null
    const server = http.createServer((req, res) => {
      res.setHeader('Content-Length', 5)
      res.setHeader('X-Field', 'value')
      res.end('hello', () => { head = res._header })
    })
    const port = await listening(server)
    try {
      const text = await exchange({ host: '127.0.0.1', port }, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
      present(head, 'res._header')
      assert.equal(typeof head, 'string')
      assert.equal(text, head + 'hello', 'the head, then the body')
    } finally {
      await closing(server)
    }
  }))

  it('socket._bytesDispatched is bytesWritten while nothing is queued, and socket._pendingData null once connected', () => holds('bytesDispatched', async () => {
    const server = net.createServer((peer) => peer.resume())
    const port = await listening(server)
    const socket = net.connect(port, '127.0.0.1')
    try {
      // lib/pipeline/request/response-bytes.js connectionBytes
      socket.write('abc')
      present(socket._pendingData, 'socket._pendingData while connecting')
      await once(socket, 'connect')
      await new Promise((resolve) => socket.write('de', resolve))
      assert.equal(socket.writableLength, 0)
      assert.equal(socket._pendingData, null, 'socket._pendingData once connected')
      assert.equal(socket._bytesDispatched, 5)
      assert.equal(socket.bytesWritten, 5)
    } finally {
      socket.destroy()
      await closing(server)
    }
  }))

  it('Module._initPaths reads NODE_PATH again', () => holds('initPaths', () => {
    presentFunction(Module._initPaths, 'Module._initPaths')
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svr-internals-'))
    const name = 'svr-internals-probe-' + process.pid
    fs.mkdirSync(path.join(dir, name))
    fs.writeFileSync(path.join(dir, name, 'index.js'), 'module.exports = "found through NODE_PATH"\n')
    const before = process.env.NODE_PATH
    try {
      process.env.NODE_PATH = dir
      Module._initPaths()
      assert.equal(require(name), 'found through NODE_PATH')
    } finally {
      if (before === undefined) delete process.env.NODE_PATH
      else process.env.NODE_PATH = before
      Module._initPaths()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }))

  it('Module._nodeModulePaths lists the node_modules directories require() searches from a directory', () => holds('nodeModulePaths', () => {
    presentFunction(Module._nodeModulePaths, 'Module._nodeModulePaths')
    const dir = path.join(path.sep, 'srv', 'site', 'mods')
    assert.deepEqual(Module._nodeModulePaths(dir), ['/srv/site/mods/node_modules', '/srv/site/node_modules', '/srv/node_modules', '/node_modules'])
  }))

  it('module._compile runs a file as a new CommonJS module with its own require, __filename and __dirname', () => holds('compile', () => {
    presentFunction(Module.prototype._compile, 'Module.prototype._compile')
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svr-internals-')))
    try {
      const file = path.join(dir, 'script.js')
      fs.writeFileSync(path.join(dir, 'helper.js'), 'module.exports = 41\n')
      fs.writeFileSync(file, 'module.exports = { answer: require("./helper") + 1, file: __filename, dir: __dirname }\n')
      // lib/application/fresh-module.js loadFreshModule
      const fresh = new Module(file, module)
      fresh.filename = file
      fresh.paths = Module._nodeModulePaths(dir)
      fresh._compile(fs.readFileSync(file, 'utf8'), file)
      assert.deepEqual(fresh.exports, { answer: 42, file, dir })
      assert.equal(require.cache[file], undefined, 'not in require.cache')
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }))

  it('svr uses no private interface of Node but these, and each where the list says', () => {
    const known = new Map()
    for (const { name, file } of Object.values(INTERFACES)) {
      if (name === null) continue
      if (!known.has(name)) known.set(name, new Set())
      known.get(name).add(file)
    }
    const unknown = []
    const used = new Map()
    for (const file of jsFiles(path.join(ROOT, 'lib'))) {
      const relative = path.relative(ROOT, file)
      const lines = fs.readFileSync(file, 'utf8').split('\n')
      lines.forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return
        for (const match of line.replace(/\s\/\/.*$/, '').matchAll(/(?:[\w$\])]|^)\._([A-Za-z]\w*)/g)) {
          const name = '_' + match[1]
          if (!known.has(name)) unknown.push(`${relative}:${i + 1}: ${line.trim()}`)
          if (!used.has(name)) used.set(name, new Set())
          used.get(name).add(relative)
        }
      })
    }
    assert.deepEqual(unknown, [], 'private properties of Node objects not in the list of this test and docs/architecture.md')
    for (const [name, files] of known) {
      for (const file of files) {
        assert.ok(used.has(name) && used.get(name).has(file), `${file} no longer uses ${name}: update this test's list and docs/architecture.md`)
      }
    }
  })
})

function jsFiles (dir) {
  const files = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) files.push(...jsFiles(full))
    else if (entry.name.endsWith('.js')) files.push(full)
  }
  return files
}
