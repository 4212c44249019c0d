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

// How many times a scope is entered while fn runs: AsyncLocalStorage#run
// with a store other than the current one (with the current one it only
// calls its function), each entry two async context frames on Node 24.
function countEntries (fn) {
  const run = AsyncLocalStorage.prototype.run
  let entries = 0
  AsyncLocalStorage.prototype.run = function (store, ...rest) {
    if (store !== this.getStore()) entries++
    return run.call(this, store, ...rest)
  }
  try {
    fn()
  } finally {
    AsyncLocalStorage.prototype.run = run
  }
  return entries
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

  it('stops at the stage that answers, in the scope', () => {
    const { ctx, seen } = request()
    runStages([handlers(seen), stage('methods', seen), stage('static', seen, () => true), stage('listing', seen)], 0, ctx.req, ctx.res, ctx, 404)
    assert.deepEqual(seen, [['handlers', OUTSIDE], ['methods', 'chain'], ['static', 'chain']])
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
    const entries = countEntries(() => runStages(stages, 0, ctx.req, ctx.res, ctx, 404))
    assert.deepEqual(seen, [
      ['first', OUTSIDE], ['script', 'chain'], ['methods', 'chain'], ['static', 'chain'], ['sendError 404', OUTSIDE]
    ])
    assert.equal(entries, 1)
  })

  it('stops at a script that answers, in its scope entered once', () => {
    const { ctx, seen } = request()
    ctx.res = { writableEnded: false }
    const entries = countEntries(() => runStages([chain(seen, true), stage('static', seen)], 0, ctx.req, ctx.res, ctx, 404))
    assert.deepEqual(seen, [['script', 'chain']])
    assert.equal(entries, 1)
  })

  it('goes on in the chain\'s scope after a script that passes the request on later, and ends outside it', async () => {
    const { ctx, seen } = request()
    ctx.res = { writableEnded: false }
    const stages = [chain(seen, false, true), stage('methods', seen), stage('static', seen)]
    const entries = countEntries(() => runStages(stages, 0, ctx.req, ctx.res, ctx, 404))
    assert.equal(entries, 1)
    await settle()
    assert.deepEqual(seen, [['script', 'chain'], ['methods', 'chain'], ['static', 'chain'], ['sendError 404', OUTSIDE]])
  })

  it('runs every stage outside any scope when no handler took the request', () => {
    const { ctx, seen } = request()
    runStages([stage('first', seen), stage('static', seen)], 0, ctx.req, ctx.res, ctx, 501)
    assert.deepEqual(seen, [['first', OUTSIDE], ['static', OUTSIDE], ['sendError 501', OUTSIDE]])
  })
})
