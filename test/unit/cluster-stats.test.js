'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { Coordinator } = require('../../lib/primary/coordinator')
const { collectStats } = require('../../lib/metrics/cluster-stats')
const { Peer, NS, inProcessPair } = require('../../lib/ipc')
const { RequestStats } = require('../../lib/worker/request-stats')
const { ProxyUpstreams } = require('../../lib/proxy/upstreams')

/** A worker's end as the coordinator sees it: records what it is sent. */
function fakeWorker (connected = true) {
  const sent = []
  const peer = new Peer((msg) => {
    if (!connected) return false
    sent.push(msg)
    return true
  })
  return { peer, sent }
}

function stats (requests) {
  return { pid: 0, started: 0, requests, status4xx: 0, status5xx: 0, malformed: 0 }
}

const quiet = { warn () {} }

describe('Coordinator.askEvery', () => {
  it('should ask every worker and answer once all have replied', async () => {
    const a = fakeWorker()
    const b = fakeWorker()
    const coordinator = new Coordinator(quiet, () => [{ slot: 1, pid: 11, peer: a.peer }, { slot: 2, pid: 12, peer: b.peer }])
    const rows = coordinator.askEvery('stats-collect', 10000)
    assert.equal(a.sent.length, 1)
    assert.equal(a.sent[0].ns, NS)
    assert.equal(a.sent[0].act, 'stats-collect')
    const { id } = a.sent[0]
    a.peer.settle({ id, value: stats(3) })
    // A second answer to the same request changes nothing.
    a.peer.settle({ id, value: stats(99) })
    b.peer.settle({ id: b.sent[0].id, value: stats(4) })
    assert.deepEqual(await rows, [
      { slot: 1, pid: 11, stats: stats(3) },
      { slot: 2, pid: 12, stats: stats(4) }
    ])
    assert.equal(a.peer.pending.size, 0)
  })

  it('should report workers that miss the deadline, are down or disconnected', async () => {
    const fast = fakeWorker()
    const slow = fakeWorker()
    const gone = fakeWorker(false)
    const coordinator = new Coordinator(quiet, () => [
      { slot: 1, pid: 21, peer: fast.peer },
      { slot: 2, pid: 22, peer: slow.peer },
      { slot: 3, pid: null, peer: null },
      { slot: 4, pid: 23, peer: gone.peer }
    ])
    const rows = coordinator.askEvery('stats-collect', 30)
    fast.peer.settle({ id: fast.sent[0].id, value: stats(1) })
    assert.deepEqual((await rows).map((w) => [w.slot, w.pid, w.stats === null]), [
      [1, 21, false], [2, 22, true], [3, null, true], [4, 23, true]
    ])
    assert.equal(gone.sent.length, 0)
    // A late answer finds nothing waiting.
    slow.peer.settle({ id: slow.sent[0].id, value: stats(2) })
    assert.equal(slow.peer.pending.size, 0)
  })

  it('should answer at once when no worker can be asked', async () => {
    const coordinator = new Coordinator(quiet, () => [{ slot: 1, pid: null, peer: null }])
    assert.deepEqual(await coordinator.askEvery('stats-collect', 10000), [{ slot: 1, pid: null, stats: null }])
  })

  it('should keep concurrent rounds apart', async () => {
    const w = fakeWorker()
    const coordinator = new Coordinator(quiet, () => [{ slot: 1, pid: 31, peer: w.peer }])
    const first = coordinator.askEvery('stats-collect', 10000)
    const second = coordinator.askEvery('stats-collect', 10000)
    w.peer.settle({ id: w.sent[1].id, value: stats(2) })
    assert.equal((await second)[0].stats.requests, 2)
    w.peer.settle({ id: w.sent[0].id, value: stats(1) })
    assert.equal((await first)[0].stats.requests, 1)
  })
})

describe('collectStats', () => {
  const runtime = (coordinator) => ({
    slot: 7,
    coordinator,
    stats: new RequestStats(),
    proxy: new ProxyUpstreams(),
    bytesSent: () => 5,
    activeConnections: async () => 2
  })

  it('should report this process alone when the coordinator is gone', async () => {
    const pair = inProcessPair(() => ({}), () => ({}))
    pair.close()
    const result = await collectStats(runtime(pair.b))
    assert.equal(result.complete, false)
    assert.equal(result.primary, null)
    assert.equal(result.workers.length, 1)
    assert.equal(result.workers[0].slot, 7)
    assert.equal(result.workers[0].pid, process.pid)
    assert.equal(typeof result.workers[0].stats.requests, 'number')
    assert.equal(result.workers[0].stats.bytesSent, 5)
    assert.equal(result.workers[0].stats.connections, 2)
  })
})
