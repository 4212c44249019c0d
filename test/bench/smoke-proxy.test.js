'use strict'

// The proxy row of `bench/run.js --quick` (see smoke.test.js).
// One file per bench run of its own: a file has the test runner's whole
// timeout, and a loaded machine stretches every run.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { requireTools } = require('../helpers/tools')
const { runBench, row, TIMEOUT_MS } = require('../helpers/bench')

describe('benchmark smoke run of the proxy row', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('prints the proxy row against nginx proxy_pass, with the 3.x proxy mod row', async (t) => {
    if (!requireTools(t, 'nginx')) return
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'proxy-1k'])
    assert.equal(code, 0, stderr)
    const what = 'proxy to a bare Node upstream, 1 KiB answer'
    for (const label of [what, what + ' — a 3.x proxy mod instead of `proxy`']) {
      const cells = row(stdout, label)
      assert.ok(Number(cells[2]) > 0, `svr req/s of "${label}": ${cells[2]}`)
      assert.equal(cells[4], 'nginx')
      assert.ok(Number(cells[5]) > 0, `nginx req/s of "${label}": ${cells[5]}`)
    }
    assert.equal(row(stdout, what)[8], '≥ 0.6')
    assert.match(stdout, /svr answered every request without socket errors, and with 2xx/)
  })
})
