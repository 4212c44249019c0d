'use strict'

// bench/own-report.js and bench/replay-answers.js: svr's own CPU per
// request is svr's less the replay's, the section says so, and the replay
// sends svr's recorded headers but for those of its own connection.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { ownOf, ratioInterval, runIssue, renderOwn } = require('../../bench/own-report')
const { pairsOf, replayable, h1Answer, h2Answer, pathOf } = require('../../bench/replay-answers')

const HELLO = { name: 'hello', status: 200, what: 'hello world' }
const MISSING = { name: '404', status: 404, what: '404' }
const FACTS = {
  date: '2026-11-29T06:00:00.000Z',
  cpu: 'AMD EPYC',
  cores: 2,
  node: 'v20.20.2',
  plan: { seconds: 5, warmup: 0, rounds: 3 },
  against: null
}

function run (cpuUs, rps) {
  return { cpuUs, rps, requests: rps * 5, errors: 0, non2xx: 0 }
}

// Runs of CPU µs per request in round order.
function runs (...cpus) {
  return cpus.map((cpuUs) => run(cpuUs, 1))
}

describe('svr\'s own CPU per request', () => {
  it('should be the median of svr\'s less the baseline\'s in each round, and the against\'s over the same baseline', () => {
    assert.deepEqual(ownOf({ svr: runs(30), baseline: runs(20), against: null }),
      { ownUs: 10, againstOwnUs: null, ratio: null, rounds: 1 })
    assert.deepEqual(ownOf({ svr: runs(30), baseline: runs(20), against: runs(40) }),
      { ownUs: 10, againstOwnUs: 20, ratio: 0.5, rounds: 1 })
    // Paired: the round the machine made slow for every target (the
    // second) moves none of the differences (3, 3, 1, 4 and 7, 7, 8, 8).
    // An even count: the mean of the middle two.
    assert.deepEqual(ownOf({ svr: runs(13, 23, 12, 14), baseline: runs(10, 20, 11, 10), against: runs(17, 27, 19, 18) }),
      { ownUs: 3, againstOwnUs: 7.5, ratio: 0.4, rounds: 4 })
    // An odd count: the middle one, 3 of 3, 3 and 1, where the medians per
    // target (13 and 11) would give 2.
    assert.equal(ownOf({ svr: runs(13, 23, 12), baseline: runs(10, 20, 11) }).ownUs, 3)
  })

  it('should leave out the rounds a side has no CPU per request of', () => {
    assert.deepEqual(ownOf({ svr: runs(30, null, 32), baseline: runs(20, 20, 20), against: runs(40, 44, null) }),
      { ownUs: 11, againstOwnUs: 22, ratio: 0.5, rounds: 2 })
  })

  it('should have no ratio when a side has no CPU per request or the against\'s own is not above 0', () => {
    assert.equal(ownOf({ svr: runs(null), baseline: runs(20) }).ownUs, null)
    assert.equal(ownOf({ svr: runs(30), baseline: runs(20), against: runs(null) }).ratio, null)
    assert.equal(ownOf({ svr: runs(30), baseline: runs(20), against: runs(19) }).ratio, null)
  })

  it('should give the ratio\'s bootstrap interval, the same for the same rounds', () => {
    const steady = { svr: runs(25, 25, 25, 25, 25), baseline: runs(20, 20, 20, 20, 20), against: runs(30, 30, 30, 30, 30) }
    assert.deepEqual(ratioInterval(steady), { low: 0.5, high: 0.5 })
    // Rounds of own 2 to 6 over against's own 10. A draw of five has the
    // smallest round as its median when it holds that round 3 times or
    // more: 5.8 % of draws, more than the 5 % tail, so with so few rounds
    // the interval spans the least and the most of them.
    const spread = { svr: runs(22, 23, 24, 25, 26), baseline: runs(20, 20, 20, 20, 20), against: runs(30, 30, 30, 30, 30) }
    assert.deepEqual(ratioInterval(spread), { low: 0.2, high: 0.6 })
    assert.deepEqual(ratioInterval(spread), ratioInterval(spread))
    // Nine rounds, own 1 to 9: a draw's median is at most 2 with
    // probability 3.0 % and at most 3 with 14.5 %, at least 8 with 3.0 %
    // and at least 7 with 14.5 %: the 5th and 95th percentiles are 3 and 7.
    const nine = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert.deepEqual(ratioInterval({ svr: runs(...nine.map((own) => 20 + own)), baseline: runs(...nine.map(() => 20)), against: runs(...nine.map(() => 30)) }),
      { low: 0.3, high: 0.7 })
    assert.equal(ratioInterval({ svr: runs(22, 23), baseline: runs(20, 20), against: runs(30, 30) }), null)
    // A round whose against's own is not above 0 makes the draws that are
    // mostly of it infinite.
    const bad = { svr: runs(22, 23, 24), baseline: runs(20, 20, 20), against: runs(19, 30, 19) }
    assert.equal(ratioInterval(bad).high, Infinity)
  })

  it('should report errors, and answers of another class than the workload\'s status', () => {
    assert.equal(runIssue({ requests: 100, errors: 0, non2xx: 0 }, 200), '')
    assert.equal(runIssue({ requests: 100, errors: 0, non2xx: 100 }, 404), '')
    assert.equal(runIssue({ requests: 100, errors: 3, non2xx: 2 }, 200), '3 errors, 2 answers of 4xx or 5xx')
    assert.equal(runIssue({ requests: 100, errors: 0, non2xx: 90 }, 404), '10 answers not of 4xx or 5xx')
    assert.equal(runIssue({ requests: 0, errors: 0, non2xx: 0 }, 200), 'no request completed')
  })
})

describe('the section of svr\'s own CPU per request', () => {
  it('should show svr, the baseline and their difference per workload', () => {
    const row = { workload: HELLO, svr: run(31.25, 40000), baseline: run(21, 52000.4), against: null, issues: [] }
    row.runs = { svr: [row.svr], baseline: [row.baseline], against: null }
    const text = renderOwn([row], FACTS)
    const lines = text.split('\n')
    assert.equal(lines[0], '## svr\'s own CPU per request')
    assert.equal(lines[2], '2026-11-29T06:00:00.000Z · AMD EPYC · 2 cores · Node v20.20.2 · no warm-up · 3 × 5 s per target, ' +
      'targets alternating (A B C, C B A); svr and baseline µs/req: of each target the run with the median CPU per request; ' +
      'own: the median over the rounds of each round\'s difference')
    assert.equal(lines[4], '| workload | svr µs/req | baseline µs/req | svr\'s own µs/req | svr req/s | baseline req/s |')
    assert.equal(lines[5], '|---|---:|---:|---:|---:|---:|')
    assert.equal(lines[6], '| hello world | 31.3 | 21.0 | 10.3 | 40000 | 52000 |')
    assert.match(text, /bench\/bare-replay\.js/)
    assert.match(text, /svr's own = svr − baseline in the same round/)
    assert.equal(lines.at(-2), 'Every run completed without errors, with no answer of 4xx or 5xx except on the 404 workload, where every answer was one.')
  })

  it('should add the against\'s own, the ratio and its interval with --against, and name the runs with issues', () => {
    const rows = [
      {
        workload: HELLO,
        svr: run(30, 40000),
        baseline: run(20, 50000),
        against: run(40, 35000),
        runs: { svr: runs(30, 29, 31), baseline: runs(20, 20, 20), against: runs(40, 40, 40) },
        issues: []
      },
      {
        workload: MISSING,
        svr: run(28, 41000),
        baseline: run(20, 50000),
        against: run(null, 0),
        runs: { svr: runs(28), baseline: runs(20), against: runs(null) },
        issues: ['against run 1: no request completed']
      }
    ]
    const lines = renderOwn(rows, { ...FACTS, against: { label: 'svr at abc1234', dir: '/tmp/x/against' } }).split('\n')
    assert.equal(lines[4], '| workload | svr µs/req | baseline µs/req | svr\'s own µs/req | against\'s own µs/req | ' +
      'own / against\'s own (90 % interval) | svr req/s | baseline req/s |')
    assert.equal(lines[5], '|---|---:|---:|---:|---:|---:|---:|---:|')
    assert.equal(lines[6], '| hello world | 30.0 | 20.0 | 10.0 | 20.0 | 0.50 (0.45–0.55) | 40000 | 50000 |')
    assert.equal(lines[7], '| 404 | 28.0 | 20.0 | 8.0 | n/a | n/a | 41000 | 50000 |')
    assert.ok(lines.some((line) => line.startsWith('against: svr at abc1234 (/tmp/x/against), the same configs, measured in the same rounds; ' +
      'its own is over the same baseline, so own / against\'s own of 0.5 is svr\'s own µs halved. The interval: the rounds resampled ' +
      'with replacement 2000 times (a bootstrap), the 5th and 95th percentiles of the ratio')))
    assert.equal(lines.at(-2), 'Runs with errors or unexpected statuses: 404 (against run 1: no request completed).')
  })
})

describe('the answers the replay sends', () => {
  const recorded = {
    status: 200,
    headers: pairsOf(['Server', 'svr', 'X-Request-Id', 'a', 'Date', 'Sun', 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=5',
      'Transfer-Encoding', 'chunked', 'Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2']),
    body: Buffer.from('Hello World').toString('base64')
  }

  it('should leave out Date and the headers of the connection and framing, and nothing else', () => {
    assert.deepEqual(replayable(recorded.headers),
      [['Server', 'svr'], ['X-Request-Id', 'a'], ['Content-Type', 'text/plain'], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2']])
    assert.deepEqual(replayable([[':status', '200'], ['content-length', '1024']]), [['content-length', '1024']])
  })

  it('should make an HTTP/1.1 answer a flat list with the place of X-Request-Id\'s value', () => {
    const answer = h1Answer(recorded)
    assert.deepEqual(answer.headers, ['Server', 'svr', 'X-Request-Id', 'a', 'Content-Type', 'text/plain', 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'])
    assert.equal(answer.idAt, 3)
    assert.equal(answer.body.toString(), 'Hello World')
    assert.equal(h1Answer({ status: 404, headers: [['Content-Type', 'text/html']], body: '' }).idAt, -1)
  })

  it('should make an HTTP/2 answer one object, names lowercased, repeated names with every value', () => {
    const answer = h2Answer(recorded)
    assert.deepEqual(answer.headers,
      { ':status': 200, server: 'svr', 'x-request-id': 'a', 'content-type': 'text/plain', 'set-cookie': ['a=1', 'b=2'] })
    assert.equal(answer.hasId, true)
  })

  it('should look answers up by path without the query', () => {
    assert.equal(pathOf('/hello?x=1'), '/hello')
    assert.equal(pathOf('/1k.html'), '/1k.html')
  })
})
