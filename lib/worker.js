'use strict'

const { createLogger } = require('./log')
const { message, dispatch } = require('./ipc')
const { createServers, listenServers, shutDown } = require('./server')
const { listenError } = require('./listen')
const { containRequestError } = require('./request-scope')
const { answerStatsCollect, settleStatsQuery } = require('./cluster-stats')
const { settleThrottleQuery } = require('./auth/cluster-throttle')

/**
 * A cluster worker: waits for its options from the primary, builds the
 * pipeline, listens, and reports back. It never reads the config file.
 */
function runWorker () {
  const log = createLogger('worker ' + (process.env.SVR_SLOT || process.pid))
  const state = { servers: null, stopping: false }

  const handlers = {
    boot: (msg) => boot(msg.options, state, log),
    shutdown: (msg) => stop(state, msg.delay || 0),
    'stats-collect': answerStatsCollect,
    'stats-reply': settleStatsQuery,
    'auth-verdict': settleThrottleQuery
  }
  process.on('message', (msg) => dispatch(handlers, msg))

  // The primary coordinates shutdown and reload: a Ctrl-C or a terminal
  // hang-up reaches the whole process group, and must not cut requests here.
  process.on('SIGINT', noop)
  process.on('SIGHUP', noop)
  // Without the primary nobody hands us connections any more.
  process.on('disconnect', () => stop(state, 0))
  process.on('uncaughtException', (err) => crashUnlessContained(err, log))
  process.on('unhandledRejection', (reason) => crashUnlessContained(reason, log))
}

function noop () {}

function crashUnlessContained (err, log) {
  if (containRequestError(err, log)) return
  log.error('uncaught exception, worker exits:', err)
  process.exit(1)
}

async function boot (options, state, log) {
  let servers
  try {
    servers = createServers(options, log)
  } catch (err) {
    reportBootError(err, err.message)
    return
  }
  try {
    const addresses = await listenServers(servers, options.config)
    state.servers = servers
    process.send(message('listening', {
      address: addresses.main,
      plainAddress: addresses.plain,
      pid: process.pid,
      handlers: servers.handlers
    }))
  } catch (err) {
    reportBootError(err, listenError(err).message)
  }
}

function reportBootError (err, reason) {
  const fields = { code: err.code || 'ERR', reason }
  process.send(message('boot-error', fields), () => process.exit(1))
}

async function stop (state, delay) {
  if (state.stopping) return
  state.stopping = true
  if (state.servers !== null) await shutDown(state.servers, delay)
  process.exit(0)
}

module.exports = { runWorker }
