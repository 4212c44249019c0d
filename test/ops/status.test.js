'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')

function field (page, id) {
  const match = new RegExp('<dd id="' + id + '">([^<]*)</dd>').exec(page)
  assert.ok(match, 'no ' + id + ' on the status page')
  return match[1]
}

function workerRows (page) {
  return [...page.matchAll(/<tr class="worker">(.*?)<\/tr>/g)].map((m) => [...m[1].matchAll(/<td>([^<]*)<\/td>/g)].map((c) => c[1]))
}

describe('status page operations counters', () => {
  it('should show body bytes, connections, restarts and reloads, in total and per worker', async (t) => {
    const body = 'x'.repeat(1000)
    const site = await makeSite(t, { workers: 2 }, { 'file.txt': body })
    const svr = await startSvr(t, site.configFile)
    const N = 10
    for (let i = 0; i < N; i++) assert.equal((await request(svr.port, '/file.txt')).body, body)
    let page = (await request(svr.port, '/svrjsstatus.svr')).body
    // The status page's own body is counted once it is sent.
    assert.equal(field(page, 'bytes-sent'), String(N * body.length))
    assert.ok(Number(field(page, 'connections')) >= 1, 'the status request\'s own connection is open')
    assert.equal(field(page, 'restarts'), '0')
    assert.equal(field(page, 'reloads'), '0')
    const rows = workerRows(page)
    assert.equal(rows.length, 2)
    assert.equal(rows.reduce((sum, row) => sum + Number(row[10]), 0), N * body.length, 'per-worker bytes add up')

    const mark = svr.output.length
    process.kill(svr.workerPids().get(2), 'SIGKILL')
    await svr.waitFor(/worker 2 replaced/, 10000, mark)
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 20000, mark)
    page = (await request(svr.port, '/svrjsstatus.svr')).body
    assert.equal(field(page, 'restarts'), '1')
    assert.equal(field(page, 'reloads'), '1')
  })
})
