'use strict'

// The row of `bench/run.js --quick` with a store (see smoke.test.js): svr
// with a rate limit and a redis-server the bench starts, against the svr
// with the same limit and none; without redis-server only that row is left
// out, saying which package brings it.
// One file per bench run of its own: a file has the test runner's whole
// timeout, and a loaded machine stretches every run.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { runBench, row, assertRatio, TIMEOUT_MS } = require('../helpers/bench')
const { skipWithout } = require('../helpers/tools')

const STORE_ROW = 'hello world from serverSideScript.js — the same rate limit with a store'
const RATE_LIMIT_ROW = 'hello world from serverSideScript.js — a rate limit per address, never reached'

describe('benchmark smoke run of the row with a store', { timeout: 2 * TIMEOUT_MS + 30000 }, () => {
  it('prints svr with a store against the svr with the same rate limit and none, with its target', { skip: skipWithout('redis-server') }, async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'hello-rate-limit,hello-rate-limit-store'])
    assert.equal(code, 0, stderr)
    const store = row(stdout, STORE_ROW)
    const rateLimit = row(stdout, RATE_LIMIT_ROW)
    assert.ok(Number(store[2]) > 0, `svr req/s with a store: ${store[2]}`)
    assert.equal(store[4], 'svr hello-rate-limit')
    assert.equal(store[5], rateLimit[2], 'the rate-limit row\'s own svr runs')
    assertRatio(store[7], store[2], rateLimit[2])
    assert.equal(store[8], '≥ 0.9')
    assert.equal(store[11], rateLimit[10])
    assert.match(stdout, /^Rows ending in “— the same rate limit with a store”: a third svr .*checked to say `store redis:\/\/127\.0\.0\.1:PORT connected`\.$/m)
    assert.match(stdout, /svr answered every request without socket errors, and with 2xx/)
  })

  it('leaves that row out without redis-server, naming its package, and measures the others', async (t) => {
    const bin = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-bin-'))
    t.after(() => fs.rm(bin, { recursive: true, force: true }))
    // Nothing on PATH (the bench starts Node by its path): autocannon's load.
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'hello-rate-limit,hello-rate-limit-store'], { BENCH_TOOL: 'autocannon', PATH: bin })
    assert.equal(code, 0, stderr)
    assert.match(stderr, /hello-rate-limit-store not measured: redis-server is not installed \(apt-get install -y redis-server\)/)
    assert.ok(Number(row(stdout, RATE_LIMIT_ROW)[2]) > 0)
    assert.ok(!stdout.includes('| ' + STORE_ROW + ' |'), 'no row with a store')
    assert.match(stdout, /^Not measured: “hello world from serverSideScript\.js — the same rate limit with a store” \(`hello-rate-limit-store`\): redis-server is not installed \(apt-get install -y redis-server\)\.$/m)
  })
})
