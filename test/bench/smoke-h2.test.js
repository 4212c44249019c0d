'use strict'

// The HTTP/2 row of `bench/run.js --tls --quick` (see smoke.test.js).
// One file per bench run of its own: a file has the test runner's whole
// timeout, and a loaded machine stretches every run.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { requireTools } = require('../helpers/tools')
const { runBench, TIMEOUT_MS } = require('../helpers/bench')

describe('benchmark smoke run of the HTTP/2 row', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('measures svr and its baselines over HTTP/2 by h2load for a fixed time, without falling back to a count', async (t) => {
    if (!requireTools(t, 'h2load', 'nginx')) return
    const { code, stdout, stderr } = await runBench(['--tls', '--quick', '--only', 'h2-static-1k'])
    assert.equal(code, 0, stderr)
    assert.doesNotMatch(stderr, /measuring by count/)
    const what = 'static 1 KiB over HTTP/2 (`h2load -c50 -m10 -D`)'
    const lines = stdout.split('\n').filter((l) => l.startsWith('| ' + what + ' |'))
    assert.deepEqual(lines.map((l) => l.split('|')[3].trim()), ['nginx tls', 'bare h2', 'bare h2 + svr headers'])
    for (const line of lines) {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
      assert.ok(Number(cells[1]) > 0, `svr req/s: ${line}`)
      assert.ok(Number(cells[3]) > 0, `baseline req/s: ${line}`)
    }
    assert.doesNotMatch(stdout, /Failed requests at svr/)
  })
})
