'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const fc = require('fast-check')
const { PassPolicy, SLACK_FRACTION, MIN_SLACK, PAUSE_MS } = require('../../lib/balance/pass-policy')
const { PeerLoads, WorkerLoads } = require('../../lib/balance/primary')
const { WorkerBalance, PROMPT_REPORT_MS } = require('../../lib/balance/worker')

// A burst of `count` connections that all land on one worker, each kept or
// passed on as the policy says: what the worker keeps and passes.
function burst (policy, count, open = 0) {
  let kept = open
  let passed = 0
  for (let i = 0; i < count; i++) {
    if (policy.shouldPass(kept)) passed++
    else kept++
  }
  return { kept: kept - open, passed }
}

function policyWith (load) {
  const policy = new PassPolicy()
  policy.peerLoad(load)
  return policy
}

describe('PassPolicy', () => {
  it('should keep everything while it is the only worker, or has not heard of others', () => {
    assert.deepEqual(burst(new PassPolicy(), 100), { kept: 100, passed: 0 })
    assert.deepEqual(burst(policyWith({ others: 0, peers: 0 }), 100), { kept: 100, passed: 0 })
  })

  it('should split a burst that lands on one of two idle workers 27/23, and one of 20 at 12/8', () => {
    assert.deepEqual(burst(policyWith({ others: 0, peers: 1 }), 50), { kept: 27, passed: 23 })
    assert.deepEqual(burst(policyWith({ others: 0, peers: 1 }), 20), { kept: 12, passed: 8 })
  })

  it('should pass nothing while it holds no more than the others and its slack', () => {
    // The other worker holds 10: up to 14 (an even 12, and 2 over) stay here.
    assert.deepEqual(burst(policyWith({ others: 10, peers: 1 }), 14), { kept: 14, passed: 0 })
    assert.deepEqual(burst(policyWith({ others: 10, peers: 1 }), 15), { kept: 14, passed: 1 })
  })

  it('should never pass while keeping stays within the slack, and never keep beyond it', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 100 }), (count, peers, others, open) => {
      const policy = policyWith({ others, peers })
      let kept = open
      let passed = 0
      for (let i = 0; i < count; i++) {
        const even = (kept + 1 + others + passed) / (peers + 1)
        const within = kept + 1 <= even + Math.max(MIN_SLACK, even * SLACK_FRACTION)
        const pass = policy.shouldPass(kept)
        assert.equal(pass, !within, JSON.stringify({ count, peers, others, open, i, kept, passed }))
        if (pass) passed++
        else kept++
      }
    }), { numRuns: 500 })
  })

  it('should start counting its passes again at each load the primary tells', () => {
    const policy = policyWith({ others: 0, peers: 1 })
    assert.deepEqual(burst(policy, 6), { kept: 5, passed: 1 })
    // The one passed on has come and gone: the other holds none, by its report.
    policy.peerLoad({ others: 0, peers: 1 })
    assert.deepEqual([policy.shouldPass(5), policy.shouldPass(5), policy.shouldPass(5)], [true, true, false])
  })

  it('should keep everything for ' + PAUSE_MS + ' ms after a connection it passed on came back', () => {
    let now = 1000
    const policy = new PassPolicy(() => now)
    policy.peerLoad({ others: 0, peers: 1 })
    assert.equal(policy.shouldPass(10), true)
    policy.pause()
    now += PAUSE_MS - 1
    assert.deepEqual(burst(policy, 5, 10), { kept: 5, passed: 0 })
    now += 1
    assert.equal(policy.shouldPass(15), true)
  })

  it('should ignore a load that is not counts, and keep everything once stopped', () => {
    const policy = policyWith({ others: 0, peers: 1 })
    for (const bad of [{ others: -1, peers: 1 }, { others: 1.5, peers: 1 }, { others: 0, peers: '1' }, {}]) policy.peerLoad(bad)
    assert.deepEqual([policy.others, policy.peers], [0, 1])
    policy.stop()
    policy.peerLoad({ others: 0, peers: 3 })
    assert.deepEqual(burst(policy, 50), { kept: 50, passed: 0 })
  })
})

describe('PeerLoads', () => {
  function recorder () {
    const sent = []
    return { sent, loads: new PeerLoads((worker, load) => sent.push([worker.id, load])) }
  }

  it('should tell each worker what the others hold, and how many they are, on a change only', () => {
    const { sent, loads } = recorder()
    const [a, b, c] = [{ id: 'a' }, { id: 'b' }, { id: 'c' }]
    loads.report(a, 5)
    assert.deepEqual(sent, [['a', { others: 0, peers: 0 }]])
    loads.report(b, 2)
    assert.deepEqual(sent.slice(1), [['a', { others: 2, peers: 1 }], ['b', { others: 5, peers: 1 }]])
    sent.length = 0
    loads.report(c, 0)
    assert.deepEqual(sent, [['a', { others: 2, peers: 2 }], ['b', { others: 5, peers: 2 }], ['c', { others: 7, peers: 2 }]])
    sent.length = 0
    loads.report(c, 0)
    assert.deepEqual(sent, [], 'no news, no message')
    loads.report(c, 3)
    assert.deepEqual(sent, [['a', { others: 5, peers: 2 }], ['b', { others: 8, peers: 2 }]], 'c\'s own view did not change')
    sent.length = 0
    loads.forget(a)
    assert.deepEqual(sent, [['b', { others: 3, peers: 1 }], ['c', { others: 2, peers: 1 }]])
  })

  it('should ignore reports that are not a count', () => {
    const { sent, loads } = recorder()
    for (const bad of [-1, 1.5, NaN, '3', null, undefined]) loads.report({ id: 'x' }, bad)
    assert.deepEqual(sent, [])
  })

  it('should take both counts of a load report, and forget a worker in both', () => {
    const sent = []
    const loads = new WorkerLoads((worker, act, fields) => sent.push([worker.id, act, fields]))
    const [a, b] = [{ id: 'a' }, { id: 'b' }]
    loads.report(a, { connections: 4, open: 9 })
    loads.report(b, { connections: 0, open: 1 })
    assert.deepEqual(sent.slice(2), [
      ['a', 'fair-share', { connections: 2 }], ['b', 'fair-share', { connections: 2 }],
      ['a', 'peer-load', { others: 1, peers: 1 }], ['b', 'peer-load', { others: 9, peers: 1 }]
    ])
    sent.length = 0
    loads.forget(b)
    assert.deepEqual(sent, [['a', 'fair-share', { connections: null }], ['a', 'peer-load', { others: 0, peers: 0 }]])
  })
})

describe('WorkerBalance', () => {
  function coordinator () {
    return { sent: [], notify (act, fields) { this.sent.push({ act, ...fields }); return true } }
  }

  it('should count the open connections of its servers, and report a move of 2 within ' + PROMPT_REPORT_MS + ' ms, once', async (t) => {
    const balance = new WorkerBalance()
    t.after(() => balance.stopReports())
    const server = new EventEmitter()
    balance.watch(server)
    const primary = coordinator()
    balance.startReports(primary)
    assert.deepEqual(primary.sent, [{ act: 'load', connections: 0, open: 0 }])
    const sockets = [new EventEmitter(), new EventEmitter(), new EventEmitter()]
    for (const socket of sockets) server.emit('connection', socket)
    assert.equal(balance.open, 3)
    await new Promise((resolve) => setTimeout(resolve, PROMPT_REPORT_MS + 30))
    assert.deepEqual(primary.sent.slice(1), [{ act: 'load', connections: 0, open: 3 }])
    sockets[0].emit('close')
    sockets[0].emit('close')
    assert.equal(balance.open, 2, 'a socket closes once')
    await new Promise((resolve) => setTimeout(resolve, PROMPT_REPORT_MS + 30))
    assert.equal(primary.sent.length, 2, 'a move of 1 waits for the regular report')
    sockets[1].emit('close')
    await new Promise((resolve) => setTimeout(resolve, PROMPT_REPORT_MS + 30))
    assert.deepEqual(primary.sent.slice(2), [{ act: 'load', connections: 0, open: 1 }])
  })

  it('should pass on nothing once stopped', () => {
    const balance = new WorkerBalance()
    balance.peerLoad({ others: 0, peers: 1 })
    balance.open = 10
    assert.equal(balance.shouldPass(), true)
    balance.stopPassing()
    balance.peerLoad({ others: 0, peers: 1 })
    assert.equal(balance.shouldPass(), false)
  })
})
