'use strict'

// The proxy row of `bench/run.js --quick` (see smoke.test.js).
// One file per bench run of its own: a file has the test runner's whole
// timeout, and a loaded machine stretches every run.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { requireTools } = require('../helpers/tools')
const { runBench, row, TIMEOUT_MS } = require('../helpers/bench')

describe('benchmark smoke run of the proxy row', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('prints the proxy row against nginx proxy_pass, with the 3.x proxy mod row, the bare proxies and Caddy, and CPU per request', async (t) => {
    if (!requireTools(t, 'nginx', 'caddy')) return
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'proxy-1k'])
    assert.equal(code, 0, stderr)
    const what = 'proxy to a bare Node upstream, 1 KiB answer'
    // Each row's baseline and target (issue #28: ≥ 0.9 of the bare undici
    // proxy, ≥ 1.2 of Caddy's reverse_proxy).
    const rows = [
      [what, 'nginx', '≥ 0.6'],
      [what + ' — a 3.x proxy mod instead of `proxy`', 'nginx', '—'],
      [what + ' — against a bare Node proxy (undici Pool)', 'bare-proxy', '≥ 0.9'],
      [what + ' — against a bare Node proxy (node:http keep-alive Agent)', 'bare-proxy-http', '—'],
      [what + ' — against Caddy `reverse_proxy`', 'caddy', '≥ 1.2']
    ]
    for (const [label, baseline, goal] of rows) {
      const cells = row(stdout, label)
      assert.ok(Number(cells[2]) > 0, `svr req/s of "${label}": ${cells[2]}`)
      assert.equal(cells[4], baseline)
      assert.ok(Number(cells[5]) > 0, `${baseline} req/s of "${label}": ${cells[5]}`)
      assert.equal(cells[8], goal, label)
      // CPU µs per request of svr and of the baseline.
      assert.ok(Number(cells[10]) > 0, `svr CPU µs/req of "${label}": ${cells[10]}`)
      assert.ok(Number(cells[11]) > 0, `${baseline} CPU µs/req of "${label}": ${cells[11]}`)
    }
    assert.match(stdout, /, Caddy \d+\.\d+\.\d+ \(`admin off`, `auto_https off`, GOMAXPROCS unset/)
    assert.match(stdout, /svr answered every request without socket errors, and with 2xx/)
  })
})
