'use strict'

const { createServers, usePipeline, useCertificates, listenServers, shutDown } = require('./server')
const { listenError, listeningLines, removeStaleSockets } = require('./listen')
const { prepareReload, ReloadQueue } = require('./reload')
const { createPipeline } = require('./pipeline')
const { svrError } = require('./errors')
const { containRequestError } = require('./request-scope')
const { warnForwardingConfig } = require('./access/client-address')
const { countReload } = require('./metrics/primary')
const { BlockState } = require('./console/block-state')
const { startConsole } = require('./console')
const { singleActions } = require('./console/actions')
const { inProcessRuntime } = require('./coordinator')
const { useApplicationNodePath, enterWebroot } = require('./application-environment')

/**
 * --single-threaded: one process serves everything. Without a primary to
 * replace it, a crash stops the server, so this mode is for debugging and
 * for environments that supervise processes themselves.
 * @param {object} options runtime options
 * @param {object} args parsed command line
 * @param {{log: object, logs: import('./logging').LogFiles, accessLog: import('./logging/access-log').AccessLog}} output
 *   the process's logger, its log files and its access log, opened before the start
 * @param {{mods: object[], remove: Function}} prepared the mods made ready by prepareMods
 */
async function runSingle (options, args, output, prepared) {
  const { log, logs, accessLog } = output
  log.warn('single-threaded mode: a crash stops the server (use a cluster for production)')
  warnForwardingConfig(options.config, log)
  const { config } = options
  await removeStaleSockets(config)
  const { runtime, worker, coordinator } = inProcessRuntime(log, { logs, accessLog })
  coordinator.configure(options)
  const blocks = new BlockState(options, (entries) => worker.notify('blocklist', { entries }), log)
  runtime.blocklist.set(await blocks.load())
  let servers
  try {
    useApplicationNodePath()
    enterWebroot(config)
    runtime.configureMetrics(options)
    servers = createServers(options, runtime)
  } catch (err) {
    log.error(err.message)
    process.exit(1)
  }
  runtime.servers = servers
  let addresses
  try {
    addresses = await listenServers(servers, options.config)
  } catch (err) {
    log.error(listenError(err).message)
    process.exit(1)
  }
  for (const line of listeningLines(addresses, options.config)) log.info(line)
  const state = { options, runtime, coordinator, stopping: false, prepared }
  const reloads = new ReloadQueue(() => reload(servers, state, args, log), () => state.stopping ? 'stopping' : null, log)
  process.on('SIGTERM', () => stop(servers, state, log, 'SIGTERM'))
  process.on('SIGINT', () => stop(servers, state, log, 'SIGINT'))
  process.on('SIGHUP', () => reloads.request())
  process.on('SIGUSR1', () => logs.reopenOnSignal(log))
  process.on('uncaughtException', (err) => crashUnlessContained(err, log))
  process.on('unhandledRejection', (reason) => crashUnlessContained(reason, log))
  startConsole(singleActions({
    servers,
    blocks,
    reload: () => reloads.request(),
    stop: () => stop(servers, state, log, 'console "stop"')
  }))
}

// Back to the webroot of the configuration that stays in use.
function leaveFor (config, log) {
  try {
    enterWebroot(config)
  } catch (err) {
    log.warn('cannot return to the webroot ' + config.wwwroot + ':', err.message)
  }
}

function crashUnlessContained (err, log) {
  if (containRequestError(err, log)) return
  log.error('uncaught exception, stopping:', err)
  process.exit(1)
}

async function stop (servers, state, log, signal) {
  if (state.stopping) return
  state.stopping = true
  const { shutdownDelay, shutdownTimeout: timeout } = state.options.config
  log.info('shutting down on ' + signal)
  const timer = setTimeout(() => {
    log.error(svrError('SVR_ERR_SHUTDOWN_TIMEOUT', [timeout]).message)
    process.exit(1)
  }, shutdownDelay + timeout)
  await shutDown(servers, shutdownDelay)
  clearTimeout(timer)
  log.info('stopped')
  await state.runtime.logs.flush()
  process.exit(0)
}

// The listening socket stays; only the request handler is swapped, so a
// changed listen address needs a restart in this mode.
async function reload (servers, state, args, log) {
  const ready = await prepareReload(state.options, args, log, (config) => config.secure === state.options.config.secure
    ? null
    : 'turning secure on or off needs a restart in single-threaded mode')
  if (ready === null) return
  const { options, prepared } = ready
  const { config } = options
  let pipeline
  try {
    // The new script and mods load with the new webroot as working directory.
    enterWebroot(config)
    pipeline = createPipeline(options, state.runtime)
  } catch (err) {
    leaveFor(state.options.config, log)
    prepared.remove()
    log.error('reload failed:', err)
    countReload('failed')
    return
  }
  if (JSON.stringify(config.port) !== JSON.stringify(state.options.config.port) ||
    JSON.stringify(config.sport) !== JSON.stringify(state.options.config.sport)) {
    log.warn('reload: a new port or sport takes effect only after a restart in single-threaded mode')
  }
  if (state.stopping) {
    // A stop began while the new configuration was being read.
    prepared.remove()
    log.warn('reload dropped: server is stopping')
    return
  }
  usePipeline(servers, pipeline, config)
  if (config.secure) useCertificates(servers, options)
  await state.runtime.logs.configure(options, state.runtime.accessLog).catch((err) => log.error('cannot open the log files:', err.message))
  state.runtime.configureMetrics(options)
  countReload('applied')
  setTimeout(state.prepared.remove, config.shutdownTimeout).unref()
  state.prepared = prepared
  state.options = options
  state.coordinator.configure(options)
  log.info('reload applied')
}

module.exports = { runSingle }
