'use strict'

const { createLogger } = require('./log')
const { message, dispatch, serve, primaryPeer } = require('./ipc')
const { Runtime } = require('./runtime')
const { deepFreeze } = require('./util/deep-freeze')
const { createServers, shutDown } = require('./server')
const { listenError } = require('./listen')
const { listenOnHandle } = require('./listen-sockets')
const { containRequestError } = require('./request-scope')
const { LogFiles } = require('./logging')
const { stopAccepting, resumeAcceptingOn, serverList } = require('./console/accepting')
const { enterWebroot } = require('./application-environment')

/**
 * A cluster worker: waits for its options from the primary, builds the
 * pipeline, listens, and reports back. It never reads the config file.
 */
function runWorker () {
  const logs = new LogFiles()
  const log = createLogger('worker ' + (process.env.SVR_SLOT || process.pid), logs)
  // handles: the listening sockets the primary sent, by server role, until used.
  const state = { servers: null, options: null, stopping: false, handles: new Map(), logs }
  const slot = Number(process.env.SVR_SLOT)
  const coordinator = primaryPeer()
  const runtime = new Runtime({ log, logs, slot: Number.isInteger(slot) ? slot : null, coordinator })

  const handlers = {
    // What the coordinator asks of every worker, and its replies.
    ...serve(runtime.services()),
    boot: (msg) => {
      runtime.blocklist.set(msg.blocked || [])
      // The primary's config is frozen; what came over the channel is a copy.
      deepFreeze(msg.options.config)
      boot(msg.options, state, runtime)
    },
    listen: (msg, from, handle) => receiveHandle(state, msg.role, handle),
    accepting: (msg) => setAccepting(state, msg.open, log),
    shutdown: (msg) => stop(state, msg.delay || 0),
    'reopen-logs': () => logs.reopen().catch((err) => log.error('cannot reopen the log files:', err.message))
  }
  process.on('message', (msg, handle) => dispatch(handlers, msg, coordinator, handle))

  // The primary coordinates shutdown and reload: a Ctrl-C or a terminal
  // hang-up reaches the whole process group, and must not cut requests here.
  process.on('SIGINT', noop)
  process.on('SIGHUP', noop)
  // logrotate signals the primary, which passes it on; a stray SIGUSR1 must
  // neither kill a worker nor open Node's inspector in it.
  process.on('SIGUSR1', noop)
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

async function boot (options, state, runtime) {
  let servers
  try {
    await runtime.logs.configure(options, runtime.accessLog)
    runtime.configureMetrics(options)
    enterWebroot(options.config)
    servers = createServers(options, runtime)
    runtime.servers = servers
  } catch (err) {
    reportBootError(err, err.message)
    return
  }
  try {
    // The primary sent the sockets before the boot message; none when the
    // console has closed the server (an 'accepting' message brings them).
    await Promise.all([...state.handles].map(([role, handle]) => listenOnHandle(servers[role], handle)))
    state.handles.clear()
    servers.lifecycle.listening()
    state.servers = servers
    state.options = options
    runtime.balance.startReports(runtime.coordinator)
    process.send(message('listening', { pid: process.pid, mods: servers.mods }))
  } catch (err) {
    reportBootError(err, listenError(err).message)
  }
}

function receiveHandle (state, role, handle) {
  if (handle === undefined) return
  const previous = state.handles.get(role)
  if (previous !== undefined) previous.close()
  state.handles.set(role, handle)
}

// Console close/open. On open the primary has sent the sockets it bound again.
function setAccepting (state, open, log) {
  if (state.servers === null || state.stopping) return
  if (!open) {
    for (const server of serverList(state.servers)) stopAccepting(server)
    return
  }
  for (const [role, handle] of state.handles) {
    resumeAcceptingOn(state.servers[role], handle).catch((err) => log.error('cannot listen again:', err.message))
  }
  state.handles.clear()
}

function reportBootError (err, reason) {
  const fields = { code: err.code || 'ERR', reason }
  process.send(message('boot-error', fields), () => process.exit(1))
}

async function stop (state, delay) {
  if (state.stopping) return
  state.stopping = true
  if (state.servers !== null) {
    // Orphaned by a dead primary, nobody would kill a worker held open by
    // one long connection (a CONNECT tunnel, say).
    const { shutdownTimeout } = state.options.config
    setTimeout(() => process.exit(1), delay + shutdownTimeout).unref()
    await shutDown(state.servers, delay)
  }
  await state.logs.flush()
  process.exit(0)
}

module.exports = { runWorker }
