'use strict'

// A cache-hit row whose answers are not hits (see smoke-cache.test.js)
// stops the run before any load: no number is reported for it.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { runBench, TIMEOUT_MS } = require('../helpers/bench')

describe('benchmark smoke run of a cache-hit row that misses', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('fails the run, saying what svr answered, when the answer is too large to be stored', async () => {
    // The bench site's own cache directory, and no body over 100 bytes kept.
    const config = JSON.stringify({ responseCache: { directory: 'response-cache', maxEntrySize: 100 } })
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'cache-hit-1k'], { BENCH_SVR_CONFIG: config })
    assert.notEqual(code, 0, stdout)
    assert.match(stderr, /cache-hit-1k: svr answered \/cached\/1k with 200 and Cache-Status "svr; fwd=miss[^"]*" \(still after \d+ ms of requests\), not with a hit/)
    assert.doesNotMatch(stdout, /^\| response cache hit/m)
    assert.doesNotMatch(stderr, /^cache-hit-1k: svr \d+ req\/s/m)
  })
})
