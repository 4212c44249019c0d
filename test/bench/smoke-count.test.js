'use strict'

// `bench/run.js --own --count --quick` end to end (see smoke.test.js): svr
// and the replay of its answers, each in one process under callgrind.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { requireTools } = require('../helpers/tools')
const { runBench, stamp, RESULTS } = require('../helpers/bench')

// Node starts about fifty times slower under valgrind; with the warm-up
// uninstrumented the file takes about 47 s alone on a 2-core machine, most
// of it the two targets starting under valgrind (a smaller warm-up saves
// 4 s). Beside two other test files on a machine running slow, it took
// more than 120 s in CI, so the test command's --test-timeout is 240 s a
// file, the tighter bound.
const COUNT_TIMEOUT_MS = 300000

describe('benchmark smoke run of the instruction count', { timeout: COUNT_TIMEOUT_MS + 30000 }, () => {
  it('counts svr\'s and the replay\'s instructions per hello request and writes the section only to --out', async (t) => {
    if (!requireTools(t, 'valgrind', 'callgrind_control', 'h2load')) return
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-count-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const out = path.join(dir, 'results.md')
    const before = await stamp(RESULTS)
    const { code, stdout, stderr } = await runBench(['--own', '--count', '--quick', '--only', 'hello', '--out', out], {}, COUNT_TIMEOUT_MS)
    assert.equal(code, 0, stderr)
    const [instructions, misses] = stdout.split('\n').filter((l) => l.startsWith('| hello world from serverSideScript.js (HTTP/1.1) |'))
      .map((line) => line.split('|').slice(2, 5).map((cell) => Number(cell.trim().replace(/,/g, ''))))
    assert.ok(misses, stdout)
    // Node's own HTTP/1.1 path is about 70,000 instructions a request and
    // misses the instruction cache about 3,000 times; a count of the whole
    // process, or of a thread doing nothing, is far off.
    for (const [what, [svr, baseline, own], low, high] of [['instructions', instructions, 30000, 1000000], ['misses', misses, 1000, 50000]]) {
      for (const [name, value] of [['svr', svr], ['baseline', baseline]]) {
        assert.ok(value > low && value < high, `${name}: ${value} ${what} a request`)
      }
      assert.equal(own, svr - baseline)
    }
    assert.match(stderr, /count: hello: svr \d+ instructions and \d+ instruction-cache misses a request \(500 requests\)/)
    assert.equal(await fs.readFile(out, 'utf8'), '# Benchmark results\n\n' + stdout.slice(stdout.indexOf('## '), stdout.lastIndexOf('wrote ')).replace(/\n+$/, '\n'))
    assert.equal(await stamp(RESULTS), before, 'a quick run must not write bench/results.md')
  })
})
