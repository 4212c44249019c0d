'use strict'

const { runInRequestScope } = require('./request-scope')

// How long a worker collects a command's output before it answers with
// what it has; what the command says later goes to the worker's log.
const COMMAND_WAIT_MS = 5000

/**
 * The console commands that 4.x mods export, by name, each name with the
 * mods that export it in chain order: SVR.JS 4.x runs the first, and its
 * `passCommand` hands the command on to the next.
 * @param {Array<{name: string, commands?: Object<string, Function>}>} links
 * @returns {Map<string, Array<{mod: string, run: Function}>>}
 */
function commandTable (links) {
  const table = new Map()
  for (const link of links) {
    if (link.commands === undefined) continue
    for (const name of Object.keys(link.commands)) {
      if (!table.has(name)) table.set(name, [])
      table.get(name).push({ mod: link.name, run: link.commands[name] })
    }
  }
  return table
}

/**
 * @param {Map<string, Array<{mod: string}>>} table from commandTable
 * @returns {Array<{name: string, mods: string[]}>} what the primary's console lists
 */
function describeCommands (table) {
  return [...table].map(([name, entries]) => ({ name, mods: entries.map((entry) => entry.mod) }))
}

/**
 * Run a mod command in this worker, as SVR.JS 4.x runs them: `run(args,
 * log, passCommand)`. Its errors are contained: a throw, a rejected
 * promise or an exception from one of its later callbacks is reported and
 * the worker goes on serving.
 * @param {Map<string, Array<{mod: string, run: Function}>>} table
 * @param {string} name
 * @param {string[]} args
 * @param {{info: Function, error: Function}} log the worker's
 * @param {number} [wait] ms to collect output before answering
 * @returns {Promise<string[]>} what the command said (its `log` lines and failures)
 */
function runModCommand (table, name, args, log, wait = COMMAND_WAIT_MS) {
  const entries = table.get(name) || []
  return new Promise((resolve) => {
    const lines = []
    let answered = false
    const timer = setTimeout(() => finish('(' + name + ' is still running; what it says from now on goes to the log)'), wait)
    function finish (last) {
      if (answered) return
      answered = true
      clearTimeout(timer)
      if (last !== undefined) lines.push(last)
      resolve(lines)
    }
    function say (text) {
      if (answered) log.info(name + ': ' + text)
      else lines.push(String(text))
    }
    function fail (entry, err) {
      const line = 'command "' + name + '" of ' + entry.mod + ' failed: ' + describe(err)
      log.error(line)
      say(line)
    }
    function runAt (index, commandArgs) {
      if (index === entries.length) {
        finish()
        return
      }
      const entry = entries[index]
      let passed = false
      function passCommand (nextArgs) {
        if (passed) return
        passed = true
        runAt(index + 1, Array.isArray(nextArgs) ? nextArgs : commandArgs)
      }
      const scope = { command: name, mod: entry.mod, fail: (err) => fail(entry, err) }
      let result
      try {
        result = runInRequestScope(scope, entry.run, commandArgs, say, passCommand)
      } catch (err) {
        fail(entry, err)
        finish()
        return
      }
      if (result !== null && typeof result === 'object' && typeof result.then === 'function') {
        result.then(() => { if (!passed) finish() }, (err) => {
          fail(entry, err)
          finish()
        })
      } else if (!passed) {
        finish()
      }
    }
    runAt(0, args)
  })
}

function describe (err) {
  return err instanceof Error ? err.name + ': ' + err.message : String(err)
}

module.exports = { commandTable, describeCommands, runModCommand, COMMAND_WAIT_MS }
