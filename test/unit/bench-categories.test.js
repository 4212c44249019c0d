'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { CATEGORIES, categorize, costPerRequest } = require('../../bench/categories')

const ROOT = '/srv/project'

function frame (id, functionName, url, children = []) {
  return { id, callFrame: { functionName, url, scriptId: '0', lineNumber: 0, columnNumber: 0 }, hitCount: 0, children }
}

// A small worker profile: each leaf is sampled a known number of times,
// 10 µs apart, so every category's time is known in advance.
function handMadeProfile () {
  const nodes = [
    frame(1, '(root)', '', [2, 3, 4, 5, 9, 13, 15]),
    frame(2, '(idle)', ''),
    frame(3, '(garbage collector)', ''),
    frame(4, '(program)', ''),
    frame(5, 'emit', 'node:events', [6]),
    frame(6, 'handle', 'file:///srv/project/lib/pipeline.js', [7, 8, 14, 16]),
    frame(7, 'writeLine', 'file:///srv/project/lib/logging/access-log.js', [10, 12, 17]),
    frame(8, 'writev', ''),
    frame(9, '', '/tmp/site/serverSideScript.js', [11]),
    frame(10, 'write', 'node:_http_outgoing'),
    frame(11, 'writeUtf8String', ''),
    frame(12, 'now', ''),
    frame(13, 'pipe', 'file:///srv/project/node_modules/send/index.js'),
    frame(14, 'run', 'node:async_hooks'),
    frame(15, 'parse', 'file:///elsewhere/lib/parse.js'),
    frame(16, 'resolve', 'node:path'),
    frame(17, 'writeSync', 'node:fs', [18]),
    frame(18, 'writeBuffer', '')
  ]
  const counts = { 2: 7, 3: 2, 4: 1, 6: 3, 8: 4, 10: 5, 11: 1, 12: 2, 13: 3, 14: 2, 15: 1, 16: 1, 18: 3 }
  const samples = []
  for (const [id, count] of Object.entries(counts)) {
    for (let i = 0; i < count; i++) samples.push(Number(id))
  }
  return { nodes, startTime: 1000, endTime: 1000 + 10 * samples.length, samples, timeDeltas: samples.map(() => 10) }
}

describe('bench categories', () => {
  it('charges each sample to the first category from the leaf toward the root', () => {
    const { busyUs, idleUs, byCategory } = categorize(handMadeProfile(), { root: ROOT })
    assert.deepEqual(byCategory, {
      'socket writes (kernel)': 50, // writev under the pipeline, writeUtf8String under the script
      'garbage collection': 20,
      // the native now() and the file write (fs's writeBuffer) of the log; not its call into Node's http
      'access log and request id': 50,
      'async context (error containment)': 20,
      'application (serverSideScript.js; bare: its handler)': 0,
      'svr pipeline': 40, // its own frame, and node:path called by it
      send: 30,
      'Node http, net and streams': 50,
      other: 20 // (program), and a lib/ of another project
    })
    assert.deepEqual(Object.keys(byCategory), CATEGORIES)
    assert.equal(idleUs, 70)
    assert.equal(busyUs, 280)
  })

  it('counts the application where no frame below it matches', () => {
    const profile = handMadeProfile()
    profile.nodes[10].callFrame.functionName = 'toString'
    const { byCategory } = categorize(profile, { root: ROOT })
    assert.equal(byCategory['application (serverSideScript.js; bare: its handler)'], 10)
    assert.equal(byCategory['socket writes (kernel)'], 40)
  })

  it('keeps only the samples within the window', () => {
    // Samples at 1010, 1020, ...: the first 7 are idle, then 2 of GC, 1 of (program).
    const { busyUs, idleUs, byCategory } = categorize(handMadeProfile(), { root: ROOT, window: { startUs: 1050, endUs: 1090 } })
    assert.equal(idleUs, 30)
    assert.equal(busyUs, 20)
    assert.equal(byCategory['garbage collection'], 20)
  })

  it('divides the busy time of all workers by the requests they served', () => {
    const cost = costPerRequest([handMadeProfile(), handMadeProfile()], 100, { root: ROOT })
    assert.equal(cost.busy, 5.6)
    assert.equal(cost.byCategory.send, 0.6)
    assert.equal(cost.byCategory['garbage collection'], 0.4)
  })
})
