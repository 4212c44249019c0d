'use strict'

// The cache-hit row of `bench/run.js --quick` (see smoke.test.js), beside
// the static 1 KiB row whose svr runs are its baseline.
// One file per bench run of its own: a file has the test runner's whole
// timeout, and a loaded machine stretches every run.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { runBench, row, assertRatio, TIMEOUT_MS } = require('../helpers/bench')

describe('benchmark smoke run of the cache-hit row', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('prints the cache hit against the same svr\'s static 1 KiB runs, with its target and CPU per request', async () => {
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'static-1k,cache-hit-1k'])
    assert.equal(code, 0, stderr)
    const hit = row(stdout, 'response cache hit of a proxied 1 KiB answer')
    const statics = row(stdout, 'static 1 KiB file')
    assert.ok(Number(hit[2]) > 0, `svr req/s of the hit: ${hit[2]}`)
    assert.equal(hit[4], 'svr static-1k')
    assert.equal(hit[5], statics[2], 'the static row\'s own svr runs')
    assertRatio(hit[7], hit[2], statics[2])
    assert.equal(hit[8], '≥ 0.9')
    assert.ok(Number(hit[10]) > 0, `svr CPU µs/req of the hit: ${hit[10]}`)
    assert.equal(hit[11], statics[10])
    assert.match(stdout, /^Row “response cache hit of a proxied 1 KiB answer”: baseline `svr static-1k` is the same svr/m)
    assert.match(stdout, /svr answered every request without socket errors, and with 2xx/)
  })
})
