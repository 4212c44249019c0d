'use strict'

const path = require('node:path')
const { svrError } = require('../errors')

const USAGE = `Usage: svr [options]

Options:
  --config PATH       configuration file (default: config.json beside svr.js)
  -t, --check-config  validate the configuration, print "configuration OK" or
                      every problem, and exit 0 or 1
  --single-threaded   serve from one process, without cluster workers
  --disable-mods      safe mode: start without mods and without serverSideScript.js
  --secure            force HTTPS on (as "secure": true in the configuration)
  -h, --help          print this help and exit
  -v, --version       print the version and exit

Signals: SIGTERM/SIGINT drain and stop, SIGHUP reloads the configuration,
SIGUSR1 reopens the log files.
`

// SVR.JS accepted DOS-style help switches, and 4.x added two flags that
// have nothing to do here because svr never writes its configuration.
const HELP_FLAGS = new Set(['-h', '--help', '-?', '/h', '/?'])
const NO_OP_FLAGS = new Set(['--stdout-notty', '--no-save-config'])

/**
 * @param {string[]} argv arguments after the script name
 * @param {string} installDir directory of svr.js
 * @returns {{action: 'run'|'check'|'help'|'version', configFile: string,
 *   singleThreaded: boolean, disableMods: boolean, secure: boolean}}
 * @throws {SvrError} SVR_ERR_BAD_FLAG
 */
function parseArgs (argv, installDir) {
  const parsed = {
    action: 'run',
    configFile: path.join(installDir, 'config.json'),
    singleThreaded: false,
    disableMods: false,
    secure: false
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (HELP_FLAGS.has(arg)) return { ...parsed, action: 'help' }
    if (arg === '-v' || arg === '--version') return { ...parsed, action: 'version' }
    if (arg === '-t' || arg === '--check-config') parsed.action = 'check'
    else if (arg === '--single-threaded') parsed.singleThreaded = true
    else if (arg === '--disable-mods') parsed.disableMods = true
    else if (arg === '--secure') parsed.secure = true
    else if (NO_OP_FLAGS.has(arg)) continue
    else if (arg === '--config' || arg.startsWith('--config=')) {
      const value = arg === '--config' ? argv[++i] : arg.slice('--config='.length)
      if (!value) throw svrError('SVR_ERR_BAD_FLAG', ['--config needs a file path'])
      parsed.configFile = path.resolve(value)
    } else {
      throw svrError('SVR_ERR_BAD_FLAG', [arg])
    }
  }
  return parsed
}

module.exports = { parseArgs, USAGE }
