'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { WebSocket } = require('undici')
const { makeSite, startSvr } = require('../helpers/server')
const { rawRequest } = require('../helpers/raw-http')
const { startWebSocketUpstream } = require('../helpers/websocket-upstream')

// Open a WebSocket, send each message, collect the answers, close.
function converse (url, messages) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    const answers = []
    ws.addEventListener('open', () => { for (const message of messages) ws.send(message) })
    ws.addEventListener('message', (event) => {
      answers.push(event.data)
      if (answers.length === messages.length) ws.close(1000)
    })
    ws.addEventListener('close', (event) => resolve({ answers, code: event.code }))
    ws.addEventListener('error', (event) => reject(event.error || new Error('WebSocket error')))
  })
}

describe('proxy WebSocket pass-through', () => {
  it('should tunnel a WebSocket over HTTP/1.1 to the upstream and back', async (t) => {
    const upstream = await startWebSocketUpstream(t)
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/ws', stripPrefix: true, upstreams: [upstream.origin] }] })
    const svr = await startSvr(t, site.configFile)
    const result = await converse('ws://127.0.0.1:' + svr.port + '/ws/chat?room=1', ['hello', 'second'])
    assert.deepEqual(result, { answers: ['echo: hello', 'echo: second'], code: 1000 })
    assert.equal(upstream.handshakes.length, 1)
    const seen = upstream.handshakes[0]
    assert.equal(seen['x-forwarded-for'], '127.0.0.1')
    assert.equal(seen.via, '1.1 svr')
    assert.equal(seen.upgrade, 'websocket')
    assert.equal(seen.connection, 'upgrade')
    assert.equal(seen['sec-websocket-version'], '13')
  })

  it('should answer an Upgrade request outside proxy routes as a plain request and close', async (t) => {
    const site = await makeSite(t, { workers: 1, proxy: [{ path: '/ws', upstreams: ['http://127.0.0.1:9'] }] })
    const svr = await startSvr(t, site.configFile)
    const res = await rawRequest(svr.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
    assert.equal(res.status, 200)
    assert.equal(res.headers.connection, 'close')
    assert.equal(res.body, '<h1>test index</h1>\n')
    // A route whose upstream is unreachable: the usual 502, then the connection closes.
    const refused = await rawRequest(svr.port, 'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
    assert.deepEqual([refused.status, refused.headers.connection], [502, 'close'])
  })
})
