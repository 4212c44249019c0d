'use strict'

const { createServer, usePipeline, listen, drain } = require('./server')
const { listenError, formatAddress, parseListenSpec, removeStaleSocket } = require('./listen')
const { loadConfig } = require('./config/load')
const { configErrorLines } = require('./config-report')
const { withOverrides } = require('./primary')
const { createPipeline } = require('./pipeline')
const { svrError } = require('./errors')
const { containRequestError } = require('./request-scope')
const { prepareMods } = require('./mods/prepare')
const { checkScript } = require('./script/check')
const { checkLogDirectory, configureLogs, reopenLogs, flushLogs } = require('./logging')
const { configureMetrics, trackServer } = require('./metrics/worker')
const { countReload } = require('./metrics/primary')
const { BlockState } = require('./console/block-state')
const { startConsole } = require('./console')
const { singleActions } = require('./console/actions')
const { setRuntimeBlocklist } = require('./access/runtime-blocklist')
const { closedUntilIdle } = require('./console/accepting')

/**
 * --single-threaded: one process serves everything. Without a primary to
 * replace it, a crash stops the server, so this mode is for debugging and
 * for environments that supervise processes themselves.
 * @param {object} options runtime options
 * @param {object} args parsed command line
 * @param {object} log
 * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
 */
async function runSingle (options, args, log, prepared) {
  log.warn('single-threaded mode: a crash stops the server (use a cluster for production)')
  const spec = parseListenSpec(options.config.port)
  if (spec.path !== undefined) await removeStaleSocket(spec.path)
  const blocks = new BlockState(options, setRuntimeBlocklist, log)
  setRuntimeBlocklist(await blocks.load())
  let server
  try {
    configureMetrics(options, 'single')
    server = createServer(options, log)
  } catch (err) {
    log.error(err.message)
    process.exit(1)
  }
  trackServer(server)
  let address
  try {
    address = await listen(server, options.config.port)
  } catch (err) {
    log.error(listenError(err).message)
    process.exit(1)
  }
  log.info('listening on ' + formatAddress(address, options.config.secure ? 'https' : 'http'))
  const state = { options, stopping: false, prepared }
  process.on('SIGTERM', () => stop(server, state, log, 'SIGTERM'))
  process.on('SIGINT', () => stop(server, state, log, 'SIGINT'))
  process.on('SIGHUP', () => reload(server, state, args, log))
  process.on('SIGUSR1', () => {
    reopenLogs().then(
      (reopened) => { if (reopened) log.info('SIGUSR1: log files reopened') },
      (err) => log.error('cannot reopen the log files:', err.message))
  })
  process.on('uncaughtException', (err) => crashUnlessContained(err, log))
  process.on('unhandledRejection', (reason) => crashUnlessContained(reason, log))
  startConsole(singleActions({
    server,
    blocks,
    reload: () => reload(server, state, args, log),
    stop: () => stop(server, state, log, 'console "stop"')
  }))
}

function crashUnlessContained (err, log) {
  if (containRequestError(err, log)) return
  log.error('uncaught exception, stopping:', err)
  process.exit(1)
}

async function stop (server, state, log, signal) {
  if (state.stopping) return
  state.stopping = true
  const timeout = state.options.config.shutdownTimeout
  log.info('shutting down on ' + signal)
  const timer = setTimeout(() => {
    log.error(svrError('SVR_ERR_SHUTDOWN_TIMEOUT', [timeout]).message)
    process.exit(1)
  }, timeout)
  await (closedUntilIdle(server) || drain(server))
  clearTimeout(timer)
  log.info('stopped')
  await flushLogs()
  process.exit(0)
}

// The listening socket stays; only the request handler is swapped, so a
// changed listen address needs a restart in this mode.
async function reload (server, state, args, log) {
  let config
  try {
    config = withOverrides(await loadConfig(state.options.configFile, { installDir: state.options.installDir }), args)
  } catch (err) {
    for (const line of configErrorLines(err, state.options.configFile)) log.error(line)
    log.error('reload refused: the old configuration stays in use')
    countReload('refused')
    return
  }
  const next = { ...state.options, config }
  let prepared
  let pipeline
  try {
    await checkScript(next)
    await checkLogDirectory(next)
    prepared = await prepareMods(next)
  } catch (err) {
    log.error(err.message)
    log.error('reload refused: the old configuration, script and mods stay in use')
    countReload('refused')
    return
  }
  const options = { ...next, mods: prepared.mods }
  try {
    pipeline = createPipeline(options, log)
  } catch (err) {
    prepared.remove()
    log.error('reload failed:', err)
    countReload('failed')
    return
  }
  if (JSON.stringify(config.port) !== JSON.stringify(state.options.config.port)) {
    log.warn('reload: a new port takes effect only after a restart in single-threaded mode')
  }
  usePipeline(server, pipeline)
  await configureLogs(options, { accessLog: true, worker: 'single' }).catch((err) => log.error('cannot open the log files:', err.message))
  configureMetrics(options, 'single')
  countReload('applied')
  setTimeout(state.prepared.remove, config.shutdownTimeout).unref()
  state.prepared = prepared
  state.options = options
  log.info('reload applied')
}

module.exports = { runSingle }
