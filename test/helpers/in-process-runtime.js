'use strict'

const { serve, inProcessPair } = require('../../lib/ipc')
const { Coordinator } = require('../../lib/primary/coordinator')
const { Runtime } = require('../../lib/worker/runtime')
const { LogFiles } = require('../../lib/logging')

/**
 * The coordinator and one worker runtime in this process, joined by the
 * in-process channel, without servers (unit tests of stages and services).
 * @param {object} log
 * @returns {{runtime: Runtime, coordinator: Coordinator, worker: import('../../lib/ipc').Peer}}
 *   worker: the coordinator's end of the channel to the runtime
 */
function inProcessRuntime (log) {
  const logs = new LogFiles()
  let workerTable = null
  let coordinator = null
  const pair = inProcessPair(() => coordinator.table, () => workerTable)
  coordinator = new Coordinator(log, () => [{ slot: null, pid: process.pid, peer: pair.a }])
  const runtime = new Runtime({ log, logs, slot: null, coordinator: pair.b })
  workerTable = serve(runtime.services())
  return { runtime, coordinator, worker: pair.a }
}

module.exports = { inProcessRuntime }
