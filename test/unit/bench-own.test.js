'use strict'

// bench/own-report.js and bench/replay-answers.js: svr's own CPU per
// request is svr's less the replay's, the section says so, and the replay
// sends svr's recorded headers but for those of its own connection.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { ownOf, runIssue, renderOwn } = require('../../bench/own-report')
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

describe('svr\'s own CPU per request', () => {
  it('should be svr\'s less the baseline\'s, and the against\'s over the same baseline', () => {
    assert.deepEqual(ownOf({ svr: run(30, 1), baseline: run(20, 1), against: null }),
      { svrUs: 30, baselineUs: 20, ownUs: 10, againstOwnUs: null, ratio: null })
    assert.deepEqual(ownOf({ svr: run(30, 1), baseline: run(20, 1), against: run(40, 1) }),
      { svrUs: 30, baselineUs: 20, ownUs: 10, againstOwnUs: 20, ratio: 0.5 })
  })

  it('should have no ratio when a side has no CPU per request or the against\'s own is not above 0', () => {
    assert.equal(ownOf({ svr: run(null, 0), baseline: run(20, 1) }).ownUs, null)
    assert.equal(ownOf({ svr: run(30, 1), baseline: run(20, 1), against: run(null, 0) }).ratio, null)
    assert.equal(ownOf({ svr: run(30, 1), baseline: run(20, 1), against: run(19, 1) }).ratio, null)
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
    const text = renderOwn([{ workload: HELLO, svr: run(31.25, 40000), baseline: run(21, 52000.4), against: null, issues: [] }], FACTS)
    const lines = text.split('\n')
    assert.equal(lines[0], '## svr\'s own CPU per request')
    assert.equal(lines[2], '2026-11-29T06:00:00.000Z · AMD EPYC · 2 cores · Node v20.20.2 · no warm-up · 3 × 5 s per target, ' +
      'targets alternating (A B C, C B A), of each the run with the median CPU per request shown')
    assert.equal(lines[4], '| workload | svr µs/req | baseline µs/req | svr\'s own µs/req | svr req/s | baseline req/s |')
    assert.equal(lines[5], '|---|---:|---:|---:|---:|---:|')
    assert.equal(lines[6], '| hello world | 31.3 | 21.0 | 10.3 | 40000 | 52000 |')
    assert.match(text, /bench\/bare-replay\.js/)
    assert.match(text, /svr's own = svr − baseline, on the same machine in the same minutes/)
    assert.equal(lines.at(-2), 'Every run completed without errors, with no answer of 4xx or 5xx except on the 404 workload, where every answer was one.')
  })

  it('should add the against\'s own and the ratio with --against, and name the runs with issues', () => {
    const rows = [
      { workload: HELLO, svr: run(30, 40000), baseline: run(20, 50000), against: run(40, 35000), issues: [] },
      { workload: MISSING, svr: run(28, 41000), baseline: run(20, 50000), against: run(null, 0), issues: ['against run 1: no request completed'] }
    ]
    const lines = renderOwn(rows, { ...FACTS, against: { label: 'svr at abc1234', dir: '/tmp/x/against' } }).split('\n')
    assert.equal(lines[4], '| workload | svr µs/req | baseline µs/req | svr\'s own µs/req | against\'s own µs/req | own / against\'s own | svr req/s | baseline req/s |')
    assert.equal(lines[5], '|---|---:|---:|---:|---:|---:|---:|---:|')
    assert.equal(lines[6], '| hello world | 30.0 | 20.0 | 10.0 | 20.0 | 0.50 | 40000 | 50000 |')
    assert.equal(lines[7], '| 404 | 28.0 | 20.0 | 8.0 | n/a | n/a | 41000 | 50000 |')
    assert.ok(lines.includes('against: svr at abc1234 (/tmp/x/against), the same configs, measured in the same rounds; its own is ' +
      'over the same baseline, so own / against\'s own of 0.5 is svr\'s own µs halved.'))
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
