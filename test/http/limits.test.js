'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { rawRequest } = require('../helpers/raw-http')
const { createScope } = require('../helpers/scope')

/**
 * Open a TCP connection and optionally write a first chunk.
 * @returns {Promise<net.Socket>} once connected
 */
function openSocket (port, first) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      if (first !== undefined) socket.write(first)
      resolve(socket)
    })
    socket.on('error', reject)
  })
}

/**
 * Everything the server sends until it closes, and when it closed.
 * @returns {Promise<{data: string, closedAfter: number}>}
 */
function untilClosed (socket, timeout) {
  const start = Date.now()
  return new Promise((resolve, reject) => {
    const chunks = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error('still open after ' + timeout + ' ms'))
    }, timeout)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closedAfter: Date.now() - start })
    })
  })
}

describe('request limits', () => {
  const scope = createScope()
  let port
  before(async () => {
    const site = await makeSite(scope, {
      workers: 1,
      maxRequestBodySize: 1000,
      maxHeaderSize: 2048,
      headersTimeout: 1000,
      keepAliveTimeout: 1000
    })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should answer a declared body over maxRequestBodySize with 413 and close', async () => {
    const res = await rawRequest(port, 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1001\r\n\r\n' + 'x'.repeat(1001))
    assert.equal(res.status, 413)
    assert.equal(res.headers.connection, 'close')
    assert.match(res.body, /413 Content Too Large|413 Payload Too Large/)
    const fits = await request(port, '/', { method: 'POST', body: 'x'.repeat(1000) })
    assert.notEqual(fits.status, 413)
  })

  it('should answer a head over maxHeaderSize with 431', async () => {
    const res = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ' + 'a'.repeat(2100) + '\r\n\r\n')
    assert.equal(res.status, 431)
    assert.equal((await request(port, '/', { headers: { 'x-fits': 'a'.repeat(1500) } })).status, 200)
  })

  it('should answer an unfinished head with 408 after headersTimeout', async () => {
    const socket = await openSocket(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n')
    const { data, closedAfter } = await untilClosed(socket, 5000)
    assert.match(data, /^HTTP\/1\.1 408 /)
    assert.ok(closedAfter >= 900 && closedAfter < 3500, 'closed after ' + closedAfter + ' ms')
  })

  it('should close an idle keep-alive connection after keepAliveTimeout', async () => {
    const socket = await openSocket(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
    const { data, closedAfter } = await untilClosed(socket, 5000)
    assert.match(data, /^HTTP\/1\.1 200 /)
    assert.match(data, /Keep-Alive: timeout=1/)
    assert.ok(closedAfter >= 900 && closedAfter < 3000, 'closed after ' + closedAfter + ' ms')
  })
})

describe('slowloris', () => {
  const scope = createScope()
  let port
  before(async () => {
    const site = await makeSite(scope, { workers: 1 })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should serve a normal client within 1 s while 300 connections trickle their heads', async () => {
    const sockets = []
    try {
      for (let i = 0; i < 300; i++) sockets.push(await openSocket(port, i % 2 === 0 ? 'GET /' : undefined))
      const trickle = setInterval(() => {
        for (const socket of sockets) if (socket.writable) socket.write('a')
      }, 100)
      try {
        const start = Date.now()
        const res = await request(port, '/', { timeout: 1000 })
        const elapsed = Date.now() - start
        assert.equal(res.status, 200)
        assert.ok(elapsed < 1000, 'served after ' + elapsed + ' ms')
      } finally {
        clearInterval(trickle)
      }
      // The slow connections were still open: this was no timeout at work.
      assert.ok(sockets.filter((socket) => !socket.destroyed).length >= 290)
    } finally {
      for (const socket of sockets) socket.destroy()
    }
  })
})

describe('maxConnections', () => {
  it('should close connections beyond the limit at once and accept again later', async (t) => {
    const site = await makeSite(t, { workers: 1, maxConnections: 2 })
    const { port } = await startSvr(t, site.configFile)
    const held = [await openSocket(port), await openSocket(port)]
    try {
      // The held sockets must have been accepted before the third arrives.
      await new Promise((resolve) => setTimeout(resolve, 200))
      const extra = await openSocket(port, 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n')
      const { data, closedAfter } = await untilClosed(extra, 3000)
      assert.equal(data, '')
      assert.ok(closedAfter < 1000)
    } finally {
      for (const socket of held) socket.destroy()
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal((await request(port, '/')).status, 200)
  })
})
