'use strict'

// Mutations of the area 'mods': application code that wraps the response,
// declares settings and exports commands (see scripts/mutations.js for the fields).

const WRAPPERS = 'test/http/mod-wrappers.test.js'
const SCOPE = 'test/unit/pipeline-scope.test.js'
const SETTINGS = 'test/http/mod-settings.test.js'
const COMMANDS = ['test/unit/console.test.js', 'test/ops/console.test.js']

module.exports = [
  {
    area: 'mods',
    file: 'lib/pipeline/request/tolerant-response.js',
    what: 'a second writeHead is no longer tolerated by the HTTP/1.1 response class (Node throws ERR_HTTP_HEADERS_SENT)',
    find: '    if (ignoreSecondWriteHead(this, statusCode)) return this\n    return super.writeHead(statusCode, reason, headers)',
    replace: '    return super.writeHead(statusCode, reason, headers)',
    tests: [WRAPPERS]
  },
  {
    area: 'mods',
    file: 'lib/http2/compat.js',
    what: 'a second writeHead is no longer tolerated over HTTP/2',
    find: '    if (ignoreSecondWriteHead(this, statusCode)) return this\n',
    replace: '',
    tests: [WRAPPERS]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/request/tolerant-response.js',
    what: 'Node writes the status line of an answer without writeHead past the wrappers, with no fields',
    find: '    if (writeHeadWrapped(this)) headForWrappers(this)\n',
    replace: '    if (false) headForWrappers(this)\n',
    tests: [WRAPPERS]
  },
  {
    area: 'mods',
    file: 'lib/static/writer.js',
    what: 'a small static file reaches the wrappers without writeHead(status, fields) before its body',
    find: "  res.setHeader('Content-Length', rep.body.length)\n  headForWrappers(res)\n",
    replace: "  res.setHeader('Content-Length', rep.body.length)\n",
    tests: [WRAPPERS]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/pipeline.js',
    what: 'the stages after the mods run outside the request scope: a wrapper failing in their callbacks takes the worker down',
    find: '    outcome = runInRequestScopeToEnd(ctx.applicationScope, runScopedStages, stages, start, ctx)',
    replace: '    outcome = runScopedStages(stages, start, ctx)',
    tests: [WRAPPERS, SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/pipeline.js',
    what: 'the pipeline does not open the chain of the mods and the script: their links and the stages after them enter the request scope twice',
    find: '    if (stage.opensScope !== undefined) {',
    replace: '    if (false) {',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/application/run.js',
    what: 'the chain runner makes a chain of its own instead of the one the pipeline opened (the stages after it answer in another scope)',
    find: '    const chain = unstartedChain(ctx) || openChain(req, res, ctx)',
    replace: '    const chain = openChain(req, res, ctx)',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/application/request-scope.js',
    what: 'the pipeline leaves the scope of a link\'s late next() with exit: with async hooks (Node 20) the stages\' scope entry inside re-enables the storage, and the unanswered page is made in the request\'s scope',
    find: '  return scope.run(undefined, fn, ...args)',
    replace: '  return scope.exit(fn, ...args)',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/application/request-scope.js',
    what: 'with async context frames the scope is not left when svr goes on after the stages (the unanswered page, a failure): made in the request\'s scope (caught where Node keeps context in frames: run the mutations with Node 24)',
    find: '  if (result !== true) scope.enterWith(prior)\n',
    replace: '',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/application/request-scope.js',
    what: 'with async context frames a stage that throws leaves the request\'s scope entered for svr\'s 500 (caught with Node 24)',
    find: '    scope.enterWith(prior)\n    throw err\n',
    replace: '    throw err\n',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/application/request-scope.js',
    what: 'the request scope is entered with enterWith under async hooks too (Node 20), where it stays on the connection\'s parser for the next request',
    find: 'const FRAMES = enterWithEndsWithCallback()\n',
    replace: 'const FRAMES = true\n',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/application/run.js',
    what: 'a chain whose script answered at once is left for the pipeline to wait on, which leaves the scope with a second frame (caught with Node 24)',
    find: '    if (res.writableEnded) return true\n',
    replace: '',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/pipeline.js',
    what: 'the page of a request no stage answered is made inside the request scope, where its failure is taken for application code\'s',
    find: '    if (isThenable(result)) return { at: i, result }\n  }\n  return false\n',
    replace: '    if (isThenable(result)) return { at: i, result }\n  }\n  ctx.shared.respond.sendError(ctx, 404)\n  return true\n',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/pipeline.js',
    what: 'a stage that throws in the request scope is failed inside it',
    find: '    const result = stage(ctx.req, ctx.res, ctx)\n',
    replace: '    let result\n    try { result = stage(ctx.req, ctx.res, ctx) } catch (err) { fail(ctx.req, ctx.res, ctx, err); return true }\n',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/pipeline.js',
    what: 'the rest of the stages after one that answered later runs outside the request scope',
    find: '  if (outcome === true) return\n',
    replace: '  if (outcome === true) return\n  ctx.applicationScope = null\n',
    tests: [SCOPE]
  },
  {
    area: 'mods',
    file: 'lib/pipeline/request/tolerant-response.js',
    what: 'the wrappers of a failed response are named but not taken off: its error page goes through the wrapper that failed',
    find: '      delete res[name]\n',
    replace: '',
    tests: [WRAPPERS, 'test/unit/respond.test.js']
  },
  {
    area: 'mods',
    file: 'lib/pipeline/request/respond.js',
    what: 'an error raised after a complete answer destroys the connection (what is still buffered can be lost)',
    find: '  if (!complete) res.destroy()',
    replace: '  res.destroy()',
    tests: ['test/unit/respond.test.js']
  },
  {
    area: 'mods',
    file: 'lib/config/load.js',
    what: 'a key the schema does not know is accepted without a mod declaring it (a typo is no longer an error)',
    find: '    if (verdict.owners.has(key)) accepted[key] = extra[key]',
    replace: '    if (true) accepted[key] = extra[key]',
    tests: [SETTINGS]
  },
  {
    area: 'mods',
    file: 'lib/application/mods/probe.js',
    what: 'a validator that throws accepts the value',
    find: "    return 'invalid value (the validator threw ' + (err instanceof Error ? err.name + ': ' + err.message : String(err)) + ')'",
    replace: '    return null',
    tests: [SETTINGS]
  },
  {
    area: 'mods',
    file: 'lib/application/mods/declarations.js',
    what: 'a mod that never finishes loading holds --check-config, start and reload for ever',
    find: '    const timer = setTimeout(() => settle(null, loadError(loading, \'still loading after \' + timeout + \' ms\')), timeout)',
    replace: '    const timer = null',
    tests: [SETTINGS]
  },
  {
    area: 'mods',
    file: 'lib/application/commands.js',
    what: 'passCommand does not hand the command on to the next mod that exports it',
    find: '        runAt(index + 1, Array.isArray(nextArgs) ? nextArgs : commandArgs)',
    replace: '        finish()',
    tests: COMMANDS
  },
  {
    area: 'mods',
    file: 'lib/application/request-scope.js',
    what: 'an exception from a later callback of a mod command takes the worker down',
    find: '  if (request.req === undefined) {\n    request.fail(err)\n    return true\n  }',
    replace: '  if (request.req === undefined) return false',
    tests: COMMANDS
  }
]
