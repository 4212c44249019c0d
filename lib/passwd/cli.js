'use strict'

const path = require('node:path')
const { parseArgs } = require('node:util')
const { ALGORITHMS, createUserRecord } = require('../auth/hash')
const { readConfigFile, writeConfigFile } = require('./config-file')
const { readHidden, readFirstLine } = require('./password')
const { nameProblem, addUser, changeUser, deleteUser, listUsers } = require('./users')

const INSTALL_DIR = path.resolve(__dirname, '..', '..')
const ACTIONS = new Set(['add', 'change', 'delete', 'list'])

const USAGE = `Usage: svrpasswd [--config PATH] add|change NAME [--algorithm ALG] [--password-stdin]
       svrpasswd [--config PATH] delete NAME
       svrpasswd [--config PATH] list

Manage the Basic-auth users in the "users" list of an svr (or SVR.JS 3.x)
config.json. Nothing else in the file changes.

Options:
  --config PATH       configuration file (default: config.json beside svr.js)
  --algorithm ALG     scrypt (default), pbkdf2 or sha256 (weak; only for old clients)
  --password-stdin    read the password from the first line of stdin instead
                      of asking twice on the terminal
  -h, --help          print this help and exit
`

class UsageError extends Error {}

/**
 * svrpasswd: add, change, delete or list users in config.json.
 * @param {string[]} argv arguments after the script name
 * @param {{stdin?: object, stdout?: object, stderr?: object, installDir?: string}} [io]
 * @returns {Promise<number>} the exit code: 0 done, 1 failed, 2 bad usage
 */
async function main (argv, io = {}) {
  const stdout = io.stdout || process.stdout
  const stderr = io.stderr || process.stderr
  let args
  try {
    args = parseCommand(argv, io.installDir || INSTALL_DIR)
  } catch (err) {
    if (!(err instanceof UsageError) && err.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' &&
      err.code !== 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') throw err
    stderr.write('svrpasswd: ' + err.message + '\n\n' + USAGE)
    return 2
  }
  if (args.action === 'help') {
    stdout.write(USAGE)
    return 0
  }
  try {
    await run(args, { stdin: io.stdin || process.stdin, stdout, stderr })
    return 0
  } catch (err) {
    stderr.write('svrpasswd: ' + err.message + '\n')
    return err.code === 'ABORTED' ? 130 : 1
  }
}

function parseCommand (argv, installDir) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      algorithm: { type: 'string' },
      'password-stdin': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false }
    }
  })
  if (values.help) return { action: 'help' }
  const [action, name, ...rest] = positionals
  checkPositionals(action, name, rest)
  checkOptions(action, values)
  return {
    action,
    name,
    configFile: path.resolve(values.config || path.join(installDir, 'config.json')),
    algorithm: values.algorithm || 'scrypt',
    passwordStdin: values['password-stdin']
  }
}

// The action and the user name it needs (none for list), or a UsageError.
function checkPositionals (action, name, rest) {
  if (!ACTIONS.has(action)) throw new UsageError(action === undefined ? 'an action is required' : 'unknown action ' + JSON.stringify(action))
  const wantsName = action !== 'list'
  if (wantsName && name === undefined) throw new UsageError(action + ' needs a user name')
  if (rest.length !== 0 || (!wantsName && name !== undefined)) throw new UsageError('too many arguments')
  if (wantsName && nameProblem(name) !== null) throw new UsageError(nameProblem(name))
}

// The options that set a password go only with the actions that set one.
function checkOptions (action, values) {
  const setsPassword = action === 'add' || action === 'change'
  if (values.algorithm !== undefined && (!setsPassword || !ALGORITHMS.includes(values.algorithm))) {
    throw new UsageError(setsPassword ? '--algorithm must be one of ' + ALGORITHMS.join(', ') : '--algorithm goes with add or change')
  }
  if (values['password-stdin'] && !setsPassword) throw new UsageError('--password-stdin goes with add or change')
}

async function run (args, io) {
  const config = await readConfigFile(args.configFile)
  const users = config.data.users || []
  if (args.action === 'list') {
    for (const line of listUsers(users)) io.stdout.write(line + '\n')
    return
  }
  let next
  let done
  if (args.action === 'delete') {
    next = deleteUser(users, args.name)
    done = 'deleted user ' + JSON.stringify(args.name)
  } else {
    // Fail on a duplicate or missing name before asking for a password.
    const probe = { name: args.name }
    if (args.action === 'add') addUser(users, probe)
    else changeUser(users, probe)
    const password = await readPassword(args, io)
    const record = await createUserRecord(args.name, password, args.algorithm)
    next = args.action === 'add' ? addUser(users, record) : changeUser(users, record)
    done = (args.action === 'add' ? 'added user ' : 'changed the password of ') + JSON.stringify(args.name) + ' (' + args.algorithm + ')'
  }
  config.data.users = next
  await writeConfigFile(config)
  io.stdout.write(done + ' in ' + config.file + '\n' +
    'svr reads users at start and on reload: run "systemctl reload svr" or send SIGHUP to the svr primary process.\n')
}

async function readPassword (args, io) {
  let password
  if (args.passwordStdin) {
    password = await readFirstLine(io.stdin)
  } else {
    if (!io.stdin.isTTY) throw new Error('no terminal to ask for the password; pipe it in with --password-stdin')
    password = await readHidden(io.stdin, io.stderr, 'Password: ')
    const again = await readHidden(io.stdin, io.stderr, 'Password again: ')
    if (again !== password) throw new Error('the passwords do not match; nothing changed')
  }
  if (password === '') throw new Error('the password is empty; nothing changed')
  return password
}

module.exports = { main, USAGE }
