'use strict'

const readline = require('node:readline')

const HELP = [
  'Commands:',
  '  help                   this list',
  '  mods                   the mods and serverSideScript.js in use',
  '  block <ip|cidr> ...    refuse these clients (403) from now on',
  '  unblock <ip|cidr> ...  lift a console block',
  '  purge <url|prefix*|all> remove cached answers of proxy routes',
  '  close                  stop accepting connections (requests in flight finish)',
  '  open                   accept connections again',
  '  restart                reload the configuration, mods and script, worker by worker',
  '  stop                   finish requests in flight and exit',
  '  clear                  clear the screen'
]
// svr's own command names, read from the help lines.
const BUILT_IN = new Set(HELP.slice(1).map((line) => line.trim().split(' ')[0]))
const CLEAR_SCREEN = '\x1b[2J\x1b[3J\x1b[H'

/**
 * The interactive console of SVR.JS 3.x on a terminal: each command
 * runs once, in the process that owns the workers, whatever their number.
 * Under a service manager stdin is not a terminal and the same actions are
 * signals (SIGHUP, SIGTERM, SIGUSR1).
 * @param {{mods: () => string[], modCommands: () => Array<{name: string, mods: string[]}>,
 *   runModCommand: (name: string, args: string[]) => Promise<string[]>, block: (args: string[]) => Promise<string[]>,
 *   unblock: (args: string[]) => Promise<string[]>, purge: (args: string[]) => Promise<string[]>, close: () => string, open: () => Promise<string>|string,
 *   restart: () => string, stop: () => void}} actions
 * @param {{input?: NodeJS.ReadableStream, output?: NodeJS.WritableStream}} [streams]
 * @returns {readline.Interface|null} null when stdin is not a terminal
 */
function startConsole (actions, streams = {}) {
  const input = streams.input || process.stdin
  const output = streams.output || process.stdout
  if (streams.input === undefined && !process.stdin.isTTY) return null
  // Reading the terminal from a background job (`svr &`) would stop the
  // whole server with SIGTTIN; ignored, the read fails instead and the
  // console simply goes away.
  if (input === process.stdin) process.on('SIGTTIN', noop)
  // The terminal's own line editing (cooked mode) is enough, and leaves
  // the log lines alone.
  const lines = readline.createInterface({ input, terminal: false })
  input.on('error', () => lines.close())
  const say = (text) => output.write(text + '\n')
  lines.on('line', (line) => {
    runCommand(line, actions, say).catch((err) => say('error: ' + err.message))
  })
  return lines
}

function noop () {}

/**
 * @param {string} line as typed
 * @param {object} actions see startConsole
 * @param {(text: string) => void} say
 * @returns {Promise<void>}
 */
async function runCommand (line, actions, say) {
  const words = line.trim().split(/\s+/).filter(Boolean)
  if (words.length === 0) return
  const [command, ...args] = words
  switch (command) {
    case 'help':
      say(HELP.concat(modCommandHelp(actions.modCommands())).join('\n'))
      return
    case 'mods':
      say(formatMods(actions.mods()))
      return
    case 'block':
    case 'unblock':
    case 'purge':
      await runListCommand(command, args, actions, say)
      return
    case 'close':
      say(actions.close())
      return
    case 'open':
      say(await actions.open())
      return
    case 'restart':
      say(actions.restart())
      return
    case 'stop':
      actions.stop()
      return
    case 'clear':
      say(CLEAR_SCREEN)
      return
    default:
      if (actions.modCommands().some((entry) => entry.name === command)) {
        for (const text of await actions.runModCommand(command, args)) say(text)
        return
      }
      say('unknown command: ' + command + ' (type "help")')
  }
}

// A command that takes one or more arguments, each answered with a line.
async function runListCommand (command, args, actions, say) {
  if (args.length === 0) {
    say('usage: ' + command + (command === 'purge' ? ' <url|prefix*|all> [...]' : ' <ip|cidr> [...]'))
    return
  }
  for (const text of await actions[command](args)) say(text)
}

// svr's own commands come first: a mod's command of the same name is not reachable, and not listed.
function modCommandHelp (commands) {
  const listed = commands.filter((entry) => !BUILT_IN.has(entry.name))
  if (listed.length === 0) return []
  return ['Commands of mods:'].concat(listed.map((entry) => '  ' + entry.name.padEnd(23) + 'from ' + entry.mods.join(', ')))
}

function formatMods (names) {
  if (names.length === 0) return 'no mods and no serverSideScript.js loaded'
  return names.map((name, i) => (i + 1) + '. ' + name).join('\n')
}

module.exports = { startConsole, runCommand, HELP }
