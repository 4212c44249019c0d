'use strict'

const { describe, it, mock } = require('node:test')
const assert = require('node:assert/strict')
const { StatsCollector, collectStats } = require('../../lib/cluster-stats')
const { NS } = require('../../lib/ipc')

/** Just enough of a cluster Worker for the collector. */
function fakeWorker (pid, connected = true) {
  return {
    process: { pid },
    sent: [],
    isConnected: () => connected,
    send (msg) { this.sent.push(msg) }
  }
}

function stats (requests) {
  return { pid: 0, started: 0, requests, status4xx: 0, status5xx: 0, malformed: 0 }
}

describe('StatsCollector', () => {
  it('should ask every worker and answer once all have replied', () => {
    const collector = new StatsCollector(10000)
    const a = fakeWorker(11)
    const b = fakeWorker(12)
    const done = mock.fn()
    collector.collect([{ slot: 1, worker: a }, { slot: 2, worker: b }], done)
    assert.equal(a.sent.length, 1)
    assert.equal(a.sent[0].ns, NS)
    assert.equal(a.sent[0].act, 'stats-collect')
    const { id } = a.sent[0]
    collector.accept({ id, stats: stats(3) }, a)
    assert.equal(done.mock.callCount(), 0)
    // A second snapshot from the same worker changes nothing.
    collector.accept({ id, stats: stats(99) }, a)
    collector.accept({ id, stats: stats(4) }, b)
    assert.equal(done.mock.callCount(), 1)
    const reply = done.mock.calls[0].arguments[0]
    assert.equal(typeof reply.started, 'number')
    assert.deepEqual(reply.workers, [
      { slot: 1, pid: 11, stats: stats(3) },
      { slot: 2, pid: 12, stats: stats(4) }
    ])
    // A late snapshot for a finished round is ignored.
    collector.accept({ id, stats: stats(5) }, b)
    assert.equal(done.mock.callCount(), 1)
  })

  it('should report workers that miss the deadline, are down or disconnected', async () => {
    const collector = new StatsCollector(30)
    const fast = fakeWorker(21)
    const slow = fakeWorker(22)
    const gone = fakeWorker(23, false)
    const reply = await new Promise((resolve) => {
      collector.collect([
        { slot: 1, worker: fast },
        { slot: 2, worker: slow },
        { slot: 3, worker: null },
        { slot: 4, worker: gone }
      ], resolve)
      collector.accept({ id: fast.sent[0].id, stats: stats(1) }, fast)
    })
    assert.deepEqual(reply.workers.map((w) => [w.slot, w.pid, w.stats === null]), [
      [1, 21, false], [2, 22, true], [3, null, true], [4, 23, true]
    ])
    assert.equal(gone.sent.length, 0)
  })

  it('should answer at once when no worker can be asked', () => {
    const collector = new StatsCollector(10000)
    const done = mock.fn()
    collector.collect([{ slot: 1, worker: null }], done)
    assert.equal(done.mock.callCount(), 1)
  })

  it('should keep concurrent rounds apart', () => {
    const collector = new StatsCollector(10000)
    const w = fakeWorker(31)
    const first = mock.fn()
    const second = mock.fn()
    collector.collect([{ slot: 1, worker: w }], first)
    collector.collect([{ slot: 1, worker: w }], second)
    collector.accept({ id: w.sent[1].id, stats: stats(2) }, w)
    assert.equal(first.mock.callCount(), 0)
    assert.equal(second.mock.callCount(), 1)
    collector.accept({ id: w.sent[0].id, stats: stats(1) }, w)
    assert.equal(first.mock.calls[0].arguments[0].workers[0].stats.requests, 1)
  })
})

describe('collectStats outside a cluster', () => {
  it('should report this process alone', async () => {
    const result = await collectStats()
    assert.equal(result.complete, true)
    assert.equal(result.workers.length, 1)
    assert.equal(result.workers[0].pid, process.pid)
    assert.equal(typeof result.workers[0].stats.requests, 'number')
  })
})
