'use strict'

// The pure parts of `npm run bench -- --own --count` (bench/count.js,
// bench/count-report.js): reading callgrind_control's count, and the table.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { mainThreadEvents, answeredWith } = require('../../bench/count')
const { countsOf, renderCounts } = require('../../bench/count-report')

// What `callgrind_control -e Ir PID` printed for svr (valgrind 3.19).
const SEVERAL_THREADS = `PID 26392: /usr/bin/node /work/main/svr.js --single-threaded --config /tmp/c.json
sending command status internal to pid 26392

  Totals:         Ir
   Th 1  647,260,973
   Th 2          199
   Th 3   26,850,235
`
const ONE_THREAD = `PID 41: /usr/bin/true
sending command status internal to pid 41

  Totals:         Ir
  Totals:    1,234,567
`

// `callgrind_control -e Ir,I1mr PID` of svr under --cache-sim=yes.
const TWO_EVENTS = `PID 21547: /usr/bin/node /work/main/svr.js --single-threaded --config /tmp/c.json

  Totals:          Ir       I1mr
   Th 1  421,566,625 20,768,823
   Th 3   10,527,890    301,210
`

describe('mainThreadEvents(text)', () => {
  it('should read the first thread\'s count of a process with several', () => {
    assert.deepEqual(mainThreadEvents(SEVERAL_THREADS), { Ir: 647260973 })
  })

  it('should read the totals of a process with one thread', () => {
    assert.deepEqual(mainThreadEvents(ONE_THREAD), { Ir: 1234567 })
  })

  it('should not take thread 10 or 11 for thread 1', () => {
    const text = '  Totals: Ir\n   Th 11       5\n   Th 10       6\n   Th 1      7,000\n'
    assert.deepEqual(mainThreadEvents(text), { Ir: 7000 })
  })

  it('should name each count by the event over its column', () => {
    assert.deepEqual(mainThreadEvents(TWO_EVENTS), { Ir: 421566625, I1mr: 20768823 })
  })

  it('should refuse output without a count, or with fewer counts than events', () => {
    assert.throws(() => mainThreadEvents('Error: callgrind_control: no callgrind run found\n'), /no count/)
    assert.throws(() => mainThreadEvents('  Totals:     Ir  I1mr\n   Th 1  300,427\n'), /no count of every event/)
  })
})

describe('countsOf(row)', () => {
  it('should give svr\'s own and the against side\'s over the same baseline, and their ratio', () => {
    assert.deepEqual(countsOf({ svr: 81000, baseline: 78000, against: 105000 }), { own: 3000, againstOwn: 27000, ratio: 3000 / 27000 })
  })

  it('should give no ratio without an against side, or when it does no more than the baseline', () => {
    assert.deepEqual(countsOf({ svr: 81000, baseline: 78000, against: null }), { own: 3000, againstOwn: null, ratio: null })
    assert.equal(countsOf({ svr: 81000, baseline: 78000, against: 78000 }).ratio, null)
  })

  it('should give nothing for a target not counted', () => {
    assert.deepEqual(countsOf({ svr: 81000, baseline: null, against: 90000 }), { own: null, againstOwn: null, ratio: null })
  })
})

describe('renderCounts(rows, facts)', () => {
  const facts = { date: '2026-12-07T00:00:00.000Z', cpu: 'AMD EPYC', node: 'v24.21.0', plan: { warm: 30000, passes: 2, settle: 1000, counted: 8000 } }
  const rows = [
    {
      workload: { what: 'hello world from serverSideScript.js (HTTP/1.1, `wrk -c50`)' },
      svr: 80907,
      baseline: 73330,
      against: 107434,
      misses: { svr: 4154, baseline: 3137, against: 4512 }
    },
    {
      workload: { what: 'static 1 KiB file (HTTP/2 over TLS, `h2load -c50 -m10 -D`)' },
      svr: 169033,
      baseline: 135280,
      against: null,
      misses: { svr: 6010, baseline: 5020, against: null }
    }
  ]
  const MISSES = '### Instruction-cache misses per request'

  // The cells of a workload's row in the instructions' table, or with
  // `misses` in the instruction-cache misses' table.
  function cells (text, what, misses = false) {
    const at = text.indexOf(MISSES)
    assert.notEqual(at, -1, `no misses table in:\n${text}`)
    const table = misses ? text.slice(at) : text.slice(0, at)
    const line = table.split('\n').find((l) => l.startsWith('| ' + what + ' |'))
    assert.ok(line, `no row "${what}" in:\n${text}`)
    return line.split('|').slice(1, -1).map((cell) => cell.trim())
  }

  it('should give each workload its counts, own and ratio, without the timed load\'s tool', () => {
    const text = renderCounts(rows, { ...facts, against: { label: 'svr at 2261906' } })
    assert.match(text, /^## svr's own instructions per request\n/)
    assert.match(text, /2 × 30,000 requests of warm-up uninstrumented \(new connections each time\), 1,000 instrumented to settle the simulated caches, then 8,000 counted/)
    assert.deepEqual(cells(text, 'hello world from serverSideScript.js (HTTP/1.1)'), [
      'hello world from serverSideScript.js (HTTP/1.1)', '80,907', '73,330', '7,577', '107,434', '34,104', '0.22'
    ])
    assert.deepEqual(cells(text, 'static 1 KiB file (HTTP/2 over TLS)').slice(1), ['169,033', '135,280', '33,753', 'n/a', 'n/a', 'n/a'])
    assert.match(text, /against: svr at 2261906/)
  })

  it('should give each workload its instruction-cache misses, own and ratio, in a table of their own', () => {
    const text = renderCounts(rows, { ...facts, against: { label: 'svr at 2261906' } })
    assert.deepEqual(cells(text, 'hello world from serverSideScript.js (HTTP/1.1)', true).slice(1),
      ['4,154', '3,137', '1,017', '4,512', '1,375', '0.74'])
    assert.deepEqual(cells(text, 'static 1 KiB file (HTTP/2 over TLS)', true).slice(1), ['6,010', '5,020', '990', 'n/a', 'n/a', 'n/a'])
  })

  it('should leave out the against columns without an against side', () => {
    const text = renderCounts(rows, { ...facts, against: null })
    assert.deepEqual(cells(text, 'hello world from serverSideScript.js (HTTP/1.1)').slice(1), ['80,907', '73,330', '7,577'])
    assert.deepEqual(cells(text, 'hello world from serverSideScript.js (HTTP/1.1)', true).slice(1), ['4,154', '3,137', '1,017'])
    assert.doesNotMatch(text, /against/)
  })
})

describe('answeredWith(stdout, status)', () => {
  const report = (done, codes) => `finished in 1.2s, 400 req/s, 1MB/s
requests: ${done} total, ${done} started, ${done} done, ${codes[0] + codes[1]} succeeded, ${codes[2] + codes[3]} failed, 0 errored, 0 timeout
status codes: ${codes[0]} 2xx, ${codes[1]} 3xx, ${codes[2]} 4xx, ${codes[3]} 5xx
`
  it('should count the requests answered with the status\'s class, 404s too', () => {
    assert.equal(answeredWith(report(8000, [8000, 0, 0, 0]), 200), 8000)
    assert.equal(answeredWith(report(8000, [0, 0, 8000, 0]), 404), 8000)
  })

  it('should give 0 when any request got another class, or the report has no counts', () => {
    assert.equal(answeredWith(report(8000, [7999, 0, 0, 1]), 200), 0)
    assert.equal(answeredWith(report(8000, [8000, 0, 0, 0]), 404), 0)
    assert.equal(answeredWith('connect: Connection refused\n', 200), 0)
  })
})
