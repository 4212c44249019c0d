'use strict'

const http = require('node:http')
const { createLogger } = require('../log')
const { message, dispatch, serve, primaryPeer } = require('../ipc')
const { Runtime } = require('./runtime')
const { deepFreeze } = require('../util/deep-freeze')
const { createServers, shutDown } = require('./servers')
const { listenError } = require('../listen')
const { listenOnHandle } = require('./listen-on-handle')
const { SharedPort } = require('./shared-port')
const { containRequestError } = require('../application/request-scope')
const { LogFiles } = require('../logging')
const { stopAccepting, resumeAcceptingOn, serverList } = require('./accepting')
const { enterWebroot } = require('../application/process-environment')
const { stateOf } = require('./server-state')
const { runModCommand, describeCommands } = require('../application/commands')

// Node emits 'disconnect' on a child's channel only once every descriptor
// the child sent over it has been acknowledged: a worker that passed a
// connection on just as the primary died would wait for that forever,
// serving the old configuration on the shared sockets. So the channel's
// state is looked at every second too.
const PRIMARY_CHECK_MS = 1000

/**
 * A cluster worker: the worker of startWorker() over the cluster channel,
 * exiting the process when it is done. It never reads the config file.
 */
function runWorker () {
  const slot = Number(process.env.SVR_SLOT)
  const worker = startWorker({
    channel: process,
    slot: Number.isInteger(slot) ? slot : null,
    name: 'worker ' + (process.env.SVR_SLOT || process.pid),
    exit: (code) => process.exit(code)
  })
  // The primary coordinates shutdown and reload: a Ctrl-C or a terminal
  // hang-up reaches the whole process group, and must not cut requests here.
  process.on('SIGINT', noop)
  process.on('SIGHUP', noop)
  // logrotate signals the primary, which passes it on; a stray SIGUSR1 must
  // neither kill a worker nor open Node's inspector in it.
  process.on('SIGUSR1', noop)
  process.on('uncaughtException', (err) => crashUnlessContained(err, worker.log))
  process.on('unhandledRejection', (reason) => crashUnlessContained(reason, worker.log))
}

function noop () {}

function crashUnlessContained (err, log) {
  if (containRequestError(err, log)) return
  log.error('uncaught exception, worker exits:', err)
  process.exit(1)
}

/**
 * One worker, over a channel to the Supervisor: waits for its options,
 * builds its servers and pipeline, listens on the sockets it is sent,
 * reports back, and drains when told to. The same code runs in a cluster
 * worker and in a --single-threaded process (lib/primary/in-process-launcher.js).
 * @param {{channel: import('node:events').EventEmitter & {send: Function, connected: boolean},
 *   slot: number|null, name: string, exit: (code: number) => void}} parts
 *   channel: the cluster worker's `process`, or an in-process channel end;
 *   slot: the worker slot, null for the worker of --single-threaded;
 *   name: its label in log lines; exit: called once it is done (its log
 *   lines written), with the exit code; processMetrics: the process's series,
 *   when the process runs more than one worker (lib/metrics/worker.js)
 * @returns {{runtime: Runtime, log: object, abort: () => void}} abort: drop
 *   every connection at once (what a SIGKILL does to a cluster worker)
 */
function startWorker ({ channel, slot, name, exit, processMetrics }) {
  const logs = new LogFiles()
  const log = createLogger(name, logs)
  // handles: the listening sockets the primary sent, by server role, until
  // used; ports: the latest SharedPort of each role, when the socket is
  // shared with the other workers of a cluster.
  // taken: ids of the connections taken this turn, to acknowledge.
  // primaryWatch: the interval that checks the channel (PRIMARY_CHECK_MS).
  const state = { servers: null, options: null, stopping: false, handles: new Map(), ports: new Map(), taken: [], logs, channel, exit, primaryWatch: null }
  const coordinator = primaryPeer(channel)
  state.coordinator = coordinator
  const runtime = new Runtime({ log, logs, slot, coordinator, processMetrics })
  state.runtime = runtime

  const handlers = {
    // What the coordinator asks of every worker, and its replies; the
    // console's open is answered once the servers listen again.
    ...serve({
      ...runtime.services(),
      accepting: (msg) => setAccepting(state, msg.open, log),
      // A console command of the mods (lib/application/commands.js).
      'mod-command': (msg) => state.servers === null ? [] : runModCommand(state.servers.commands, msg.name, msg.args, log)
    }),
    boot: (msg) => {
      runtime.blocklist.set(msg.blocked || [])
      // The primary's config is frozen; what came over the cluster channel is a copy.
      deepFreeze(msg.options.config)
      boot(msg.options, state)
    },
    listen: (msg, from, handle) => receiveHandle(state, msg.role, msg.shared === true ? sharedPort(state, msg.role, handle) : handle),
    conn: (msg, from, client) => takeConnection(state, msg, client),
    shutdown: (msg) => stop(state, msg.delay || 0),
    'reopen-logs': () => logs.reopen().catch((err) => log.error('cannot reopen the log files:', err.message))
  }
  channel.on('message', (msg, handle) => dispatch(handlers, msg, coordinator, handle))
  // Without the primary nobody hands us connections any more.
  channel.on('disconnect', () => stop(state, 0))
  state.primaryWatch = setInterval(() => { if (!channel.connected) stop(state, 0) }, PRIMARY_CHECK_MS)
  state.primaryWatch.unref()
  return { runtime, log, abort: () => abort(state) }
}

async function boot (options, state) {
  const { runtime } = state
  let servers
  try {
    await runtime.logs.configure(options, runtime.accessLog)
    // Told to stop meanwhile (an in-process worker goes on running after its exit).
    if (state.stopping) return
    runtime.configureMetrics(options)
    enterWebroot(options.config)
    servers = createServers(options, runtime)
    runtime.servers = servers
    // Keys that came while the servers were made.
    if (runtime.ticketKeys !== null) runtime.useTicketKeys(runtime.ticketKeys.toString('base64'))
  } catch (err) {
    reportBootError(state, err, err.message)
    return
  }
  try {
    // The primary sent the sockets before the boot message; none when the
    // console has closed the server (an 'accepting' message brings them).
    await Promise.all([...state.handles].map(([role, handle]) => listenOnHandle(servers[role], handle)))
    state.handles.clear()
    if (state.stopping) {
      abort(state)
      return
    }
    servers.lifecycle.listening()
    state.servers = servers
    state.options = options
    runtime.balance.startReports(runtime.coordinator)
    state.channel.send(message('listening', { pid: process.pid, mods: servers.mods, commands: describeCommands(servers.commands) }))
  } catch (err) {
    reportBootError(state, err, listenError(err).message)
  }
}

function receiveHandle (state, role, handle) {
  if (handle === undefined) return
  const previous = state.handles.get(role)
  if (previous !== undefined) previous.close()
  state.handles.set(role, handle)
}

function sharedPort (state, role, handle) {
  if (handle === undefined || handle === null) return undefined
  const port = new SharedPort(role, handle, state.coordinator, state.runtime.balance)
  state.ports.set(role, port)
  return port
}

// A connection the primary hands over (another worker passed it on, or one
// that died before taking it had been handed it, or this one passed it on
// and no other could take it: then it passes nothing on for a while): the
// server of its role takes it, or, when that server no longer listens, the
// primary gives it to another worker at once. The connections taken are acknowledged together once per
// turn of the event loop, before a byte of any of them is read here (reads
// come in the poll phase of the next turn).
function takeConnection (state, msg, client) {
  if (client === undefined || client === null) return
  if (msg.back === true) state.runtime.balance.passedBack()
  const port = state.ports.get(msg.role)
  let taken = false
  try {
    taken = port !== undefined && port.take(client)
  } catch (err) {
    // Node's accept path closes what it cannot take; the connection is ours.
    taken = true
    state.runtime.log.error('cannot take a connection:', err)
  }
  if (!taken) {
    client.close()
    state.coordinator.notify('conn-taken', { ids: [msg.id], taken: false })
    return
  }
  if (state.taken.length === 0) setImmediate(acknowledgeTaken, state)
  state.taken.push(msg.id)
}

function acknowledgeTaken (state) {
  const ids = state.taken
  state.taken = []
  state.coordinator.notify('conn-taken', { ids, taken: true })
}

// Console close/open. On open the primary has sent the sockets it bound
// again; settles once the servers listen on them.
async function setAccepting (state, open, log) {
  if (state.servers === null || state.stopping) return
  if (!open) {
    for (const server of serverList(state.servers)) stopAccepting(server)
    return
  }
  const opened = [...state.handles].map(([role, handle]) => resumeAcceptingOn(state.servers[role], handle)
    .catch((err) => log.error('cannot listen again:', err.message)))
  state.handles.clear()
  await Promise.all(opened)
}

function reportBootError (state, err, reason) {
  const fields = { code: err.code || 'ERR', reason }
  state.stopping = true
  state.channel.send(message('boot-error', fields), () => finish(state, 1))
}

async function stop (state, delay) {
  if (state.stopping) return
  state.stopping = true
  state.runtime.balance.stopPassing()
  if (state.servers !== null) {
    // Orphaned by a dead primary, nobody would kill a worker held open by
    // one long connection (a CONNECT tunnel, say).
    const { shutdownTimeout } = state.options.config
    const orphaned = setTimeout(() => finish(state, 1), delay + shutdownTimeout)
    orphaned.unref()
    await shutDown(state.servers, delay)
    clearTimeout(orphaned)
  }
  await state.logs.flush()
  finish(state, 0)
}

function finish (state, code) {
  if (state.finished) return
  state.finished = true
  clearInterval(state.primaryWatch)
  state.runtime.release()
  state.exit(code)
}

// Close every server and drop its connections: what is left when a
// process is killed.
function abort (state) {
  state.stopping = true
  clearInterval(state.primaryWatch)
  for (const handle of state.handles.values()) handle.close()
  state.handles.clear()
  const { servers } = state.runtime
  if (servers === null) return
  for (const server of serverList(servers)) {
    if (server.listening) server.close()
    http.Server.prototype.closeAllConnections.call(server)
    const { sessions } = stateOf(server)
    if (sessions !== null) for (const session of sessions) session.destroy()
  }
}

module.exports = { runWorker, startWorker }
