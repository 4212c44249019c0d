'use strict'

// Where the request scope of the mods and the script begins and ends in the
// pipeline (lib/pipeline/pipeline.js runStages): the stages after the
// handlers run inside it, since they answer through methods application code
// may have wrapped; svr's own answers after them (the page of a request no
// stage answered, the 500 of a stage that threw or rejected) run outside
// it, so that a failure there is not taken for application code's.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { AsyncLocalStorage } = require('node:async_hooks')
const http = require('node:http')
const net = require('node:net')
const { once } = require('node:events')
const { runStages } = require('../../lib/pipeline/pipeline')
const { currentRequest } = require('../../lib/application/request-scope')
const { createChainRunner } = require('../../lib/application/run')

const OUTSIDE = 'outside'

// The scope a stage runs in: the request's chain (the real one has no
// name), or outside any.
function where () {
  const store = currentRequest()
  return store === undefined ? OUTSIDE : store.name || 'chain'
}

function request () {
  const seen = []
  const ctx = {
    applicationScope: null,
    req: { method: 'GET' },
    res: {},
    requestId: 'id-1',
    originalUrl: '/x',
    shared: {
      respond: { sendError: (c, status) => seen.push(['sendError ' + status, where()]) },
      log: { error: () => seen.push(['log.error', where()]) }
    }
  }
  return { ctx, seen }
}

// A stage that notes where it ran, then does `then`.
function stage (name, seen, then = () => false) {
  return (req, res, ctx) => {
    seen.push([name, where()])
    return then(ctx)
  }
}

// The handlers stage: takes the request into its chain's scope.
function handlers (seen) {
  return stage('handlers', seen, (ctx) => {
    ctx.applicationScope = { name: 'chain' }
    return false
  })
}

// The real chain of the mods and the script, of links that note where they
// ran and then pass the request on or answer it.
function chain (seen, answers = false, later = false) {
  const link = {
    name: 'script',
    invoke (req, res, ctx, next) {
      seen.push(['script', currentRequest() === ctx.applicationScope ? where() : 'another scope'])
      if (answers) res.writableEnded = true
      else if (later) setImmediate(next)
      else next()
    }
  }
  return createChainRunner([link], 'invoke', { log: { warn () {}, error () {} } })
}

// Whether Node keeps async context in frames (Node 24, Node 22 with the
// flag), where each AsyncLocalStorage#enterWith makes one (a Map) and run
// calls enterWith twice, to go in and to come back out.
const FRAMES = AsyncLocalStorage.prototype._propagate === undefined

// How the scope is entered while fn runs: `entries`, the times a store other
// than the current one is entered (run with the current one only calls its
// function; enterWith with none leaves a scope), and `frames`, the async
// context frames made on the way (0 without frames).
function countEntries (fn) {
  const { run, enterWith } = AsyncLocalStorage.prototype
  let entries = 0
  let frames = 0
  let inRun = 0
  AsyncLocalStorage.prototype.run = function (store, ...rest) {
    if (store !== this.getStore()) entries++
    inRun++
    try {
      return run.call(this, store, ...rest)
    } finally {
      inRun--
    }
  }
  AsyncLocalStorage.prototype.enterWith = function (store) {
    frames++
    if (inRun === 0 && store !== undefined) entries++
    return enterWith.call(this, store)
  }
  try {
    fn()
  } finally {
    AsyncLocalStorage.prototype.run = run
    AsyncLocalStorage.prototype.enterWith = enterWith
  }
  return { entries, frames: FRAMES ? frames : 0 }
}

// Runs fn in a callback of Node's own (an immediate), as a request arrives
// in one: with frames, a stage that answered leaves the scope entered for
// the callback's end to close.
function inCallback (fn) {
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      try {
        resolve(fn())
      } catch (err) {
        reject(err)
      }
    })
  })
}

function settle () {
  return new Promise((resolve) => setImmediate(resolve))
}

describe('the request scope in the pipeline', () => {
  it('runs the stages after the handlers in the chain\'s scope, and the unanswered page outside it', () => {
    const { ctx, seen } = request()
    runStages([stage('first', seen), handlers(seen), stage('methods', seen), stage('static', seen)], 0, ctx.req, ctx.res, ctx, 404)
    assert.deepEqual(seen, [
      ['first', OUTSIDE], ['handlers', OUTSIDE], ['methods', 'chain'], ['static', 'chain'], ['sendError 404', OUTSIDE]
    ])
  })

  it('stops at the stage that answers, in the scope, which ends with the callback', async () => {
    const { ctx, seen } = request()
    await inCallback(() => runStages([handlers(seen), stage('methods', seen), stage('static', seen, () => true), stage('listing', seen)], 0, ctx.req, ctx.res, ctx, 404))
    assert.deepEqual(seen, [['handlers', OUTSIDE], ['methods', 'chain'], ['static', 'chain']])
    assert.equal(where(), OUTSIDE)
  })

  it('fails a stage that throws in the scope with a 500 made outside it', () => {
    const { ctx, seen } = request()
    const throwing = stage('static', seen, () => { throw new Error('broken') })
    runStages([handlers(seen), throwing, stage('listing', seen)], 0, ctx.req, ctx.res, ctx, 404)
    assert.deepEqual(seen, [['handlers', OUTSIDE], ['static', 'chain'], ['log.error', OUTSIDE], ['sendError 500', OUTSIDE]])
  })

  it('goes on in the scope after a stage that answers later without answering, and ends outside it', async () => {
    const { ctx, seen } = request()
    const later = stage('static', seen, () => Promise.resolve(false))
    runStages([handlers(seen), later, stage('listing', seen)], 0, ctx.req, ctx.res, ctx, 404)
    await settle()
    assert.deepEqual(seen, [['handlers', OUTSIDE], ['static', 'chain'], ['listing', 'chain'], ['sendError 404', OUTSIDE]])
  })

  it('fails a stage whose promise rejects with a 500 made outside the scope', async () => {
    const { ctx, seen } = request()
    const rejecting = stage('static', seen, () => Promise.reject(new Error('broken later')))
    runStages([handlers(seen), rejecting, stage('listing', seen)], 0, ctx.req, ctx.res, ctx, 404)
    await settle()
    assert.deepEqual(seen, [['handlers', OUTSIDE], ['static', 'chain'], ['log.error', OUTSIDE], ['sendError 500', OUTSIDE]])
  })

  it('enters the scope once for the links and the stages after them', () => {
    const { ctx, seen } = request()
    ctx.res = { writableEnded: false }
    const stages = [stage('first', seen), chain(seen), stage('methods', seen), stage('static', seen)]
    const counted = countEntries(() => runStages(stages, 0, ctx.req, ctx.res, ctx, 404))
    assert.deepEqual(seen, [
      ['first', OUTSIDE], ['script', 'chain'], ['methods', 'chain'], ['static', 'chain'], ['sendError 404', OUTSIDE]
    ])
    // With frames: one to go in, one to come back out for svr's own 404.
    assert.deepEqual(counted, { entries: 1, frames: FRAMES ? 2 : 0 })
  })

  it('stops at a script that answers, in its scope entered once', async () => {
    const { ctx, seen } = request()
    ctx.res = { writableEnded: false }
    const counted = await inCallback(() => countEntries(() => runStages([chain(seen, true), stage('static', seen)], 0, ctx.req, ctx.res, ctx, 404)))
    assert.deepEqual(seen, [['script', 'chain']])
    // With frames, none to come back out: the callback's end does that.
    assert.deepEqual(counted, { entries: 1, frames: FRAMES ? 1 : 0 })
    assert.equal(where(), OUTSIDE)
  })

  it('goes on in the chain\'s scope after a script that passes the request on later, and ends outside it', async () => {
    const { ctx, seen } = request()
    ctx.res = { writableEnded: false }
    const stages = [chain(seen, false, true), stage('methods', seen), stage('static', seen)]
    const counted = countEntries(() => runStages(stages, 0, ctx.req, ctx.res, ctx, 404))
    assert.deepEqual(counted, { entries: 1, frames: FRAMES ? 2 : 0 })
    await settle()
    assert.deepEqual(seen, [['script', 'chain'], ['methods', 'chain'], ['static', 'chain'], ['sendError 404', OUTSIDE]])
  })

  it('ends a scope left entered with the callback that delivered the request: the next request on the connection starts outside it', async () => {
    const seen = []
    // A script that answers at once and leaves a timer behind, whose
    // callback belongs to the request.
    const link = {
      name: 'script',
      invoke (req, res) {
        seen.push(['script ' + req.url, where()])
        setTimeout(() => seen.push(['timer ' + req.url, where()]), 1)
        res.end(req.url)
      }
    }
    const runChain = createChainRunner([link], 'invoke', { log: { warn () {}, error () {} } })
    const server = http.createServer((req, res) => {
      const { ctx } = request()
      Object.assign(ctx, { req, res })
      runStages([stage('first ' + req.url, seen), runChain], 0, req, res, ctx, 404)
    })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const socket = net.connect(server.address().port, '127.0.0.1')
    try {
      let received = ''
      socket.setEncoding('latin1')
      socket.on('data', (chunk) => { received += chunk })
      // Both in one write: Node's parser hands them over in one read.
      socket.write('GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n')
      while (!received.includes('/b') || seen.length < 6) await new Promise((resolve) => setTimeout(resolve, 5))
    } finally {
      socket.destroy()
      server.close()
    }
    assert.deepEqual(seen.filter(([what]) => !what.startsWith('timer')), [
      ['first /a', OUTSIDE], ['script /a', 'chain'], ['first /b', OUTSIDE], ['script /b', 'chain']
    ])
    assert.deepEqual(seen.filter(([what]) => what.startsWith('timer')).sort(), [['timer /a', 'chain'], ['timer /b', 'chain']])
  })

  it('runs every stage outside any scope when no handler took the request', () => {
    const { ctx, seen } = request()
    runStages([stage('first', seen), stage('static', seen)], 0, ctx.req, ctx.res, ctx, 501)
    assert.deepEqual(seen, [['first', OUTSIDE], ['static', OUTSIDE], ['sendError 501', OUTSIDE]])
  })
})
