'use strict'

// The benchmark harness end to end in seconds: `bench/run.js --quick`
// starts svr, its variants and the baselines, loads them and prints the
// table. Its numbers are not judged here, only that there are numbers.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { runBench, row, stamp, RESULTS, TIMEOUT_MS } = require('../helpers/bench')

describe('benchmark smoke run', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('prints req/s of svr and the bare cluster for hello and 404, with their rows against svr\'s headers and access-log-off rows', async () => {
    const before = await stamp(RESULTS)
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'hello,404'])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^\| workload \| c \| svr req\/s \|/m)
    for (const what of ['hello world from serverSideScript.js', '404']) {
      for (const label of [what, what + ' — access log off']) {
        const cells = row(stdout, label)
        assert.ok(Number(cells[2]) > 0, `svr req/s of "${label}": ${cells[2]}`)
        assert.equal(cells[4], 'bare')
        assert.ok(Number(cells[5]) > 0, `bare req/s of "${label}": ${cells[5]}`)
      }
    }
    assert.equal(row(stdout, '404')[8], '≥ 0.8')
    for (const [what, goal] of [['hello world from serverSideScript.js', '≥ 0.9'], ['404', '≥ 0.85']]) {
      const cells = row(stdout, what + ' — against svr\'s headers')
      assert.equal(cells[2], row(stdout, what)[2], 'the same svr runs')
      assert.equal(cells[4], 'bare-headers')
      assert.ok(Number(cells[5]) > 0, `bare-headers req/s of "${what}": ${cells[5]}`)
      assert.equal(cells[8], goal)
    }
    assert.equal(row(stdout, '404 — access log off')[8], '—')
    assert.equal(await stamp(RESULTS), before, 'a quick run must not write bench/results.md')
  })

  it('prints a cost curve with its rows, their ratio to the smallest, boot and reload, without writing results', async () => {
    const before = await stamp(RESULTS)
    const { code, stdout, stderr } = await runBench(['--curves', '--quick', '--only', 'vhosts'])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^## Cost curves$/m)
    const lines = stdout.split('\n').filter((l) => /^\| (`customHeadersVHost`|″) /.test(l))
    assert.deepEqual(lines.map((l) => l.split('|')[2].trim()), ['1', '100', '1,000'])
    const first = lines[0].split('|').slice(1, -1).map((cell) => cell.trim())
    assert.equal(first[3], '1.00')
    for (const line of lines) {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
      assert.ok(Number(cells[2]) > 0, `req/s: ${line}`)
      assert.match(cells[6], /^\d+(\.\d+)? ms$/, `boot: ${line}`)
      assert.match(cells[7], /^\d+(\.\d+)? ms$/, `reload: ${line}`)
    }
    assert.equal(await stamp(RESULTS), before, 'a quick run must not write bench/results.md')
  })

  it('runs with autocannon, without an nginx that starts and without caddy, leaving those baselines out', async (t) => {
    const bin = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-bin-'))
    t.after(() => fs.rm(bin, { recursive: true, force: true }))
    // An nginx that exits at once, as one that cannot bind or lacks rights.
    await fs.writeFile(path.join(bin, 'nginx'), '#!/bin/sh\necho "nginx: [emerg] cannot start" >&2\nexit 1\n', { mode: 0o755 })
    // Nothing else on PATH: no caddy (the bench starts Node by its path).
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'static-1k'], { BENCH_TOOL: 'autocannon', PATH: bin })
    assert.equal(code, 0, stderr)
    assert.match(stderr, /nginx did not start/)
    assert.match(stderr, /caddy is not installed \(apt-get install caddy\)/)
    assert.match(stdout, /load by autocannon/)
    assert.match(stdout, /, Caddy not installed \(`apt-get install caddy`\) or did not start/)
    for (const label of ['static 1 KiB file', 'static 1 KiB file — against Caddy `file_server`']) {
      const cells = row(stdout, label)
      assert.ok(Number(cells[2]) > 0, `svr req/s of "${label}": ${cells[2]}`)
      assert.equal(cells[5], 'n/a')
      assert.equal(cells[11], 'n/a')
    }
  })
})
