'use strict'

const path = require('node:path')
const { parseArgs, USAGE } = require('./cli')
const { loadConfig } = require('./config/load')
const { configErrorLines } = require('./config-report')
const { createLogger } = require('./log')
const { fullServerString } = require('./version')
const { runPrimary, withOverrides } = require('./primary')
const { runSingle } = require('./single')

const INSTALL_DIR = path.resolve(__dirname, '..')

/**
 * Entry point of the primary (or single) process.
 * @param {string[]} argv command-line arguments after the script name
 */
async function main (argv) {
  let args
  try {
    args = parseArgs(argv, INSTALL_DIR)
  } catch (err) {
    process.stderr.write('svr: ' + err.message + '\n\n' + USAGE)
    process.exitCode = 2
    return
  }
  if (args.action === 'help') {
    process.stdout.write(USAGE)
    return
  }
  if (args.action === 'version') {
    process.stdout.write(fullServerString() + '\n')
    return
  }
  let config
  try {
    config = withOverrides(await loadConfig(args.configFile, { installDir: INSTALL_DIR }), args)
  } catch (err) {
    for (const line of configErrorLines(err, args.configFile)) process.stderr.write(line + '\n')
    process.exitCode = 1
    return
  }
  if (args.action === 'check') {
    process.stdout.write('configuration OK: ' + args.configFile + '\n')
    return
  }
  const options = Object.freeze({
    config,
    configFile: args.configFile,
    installDir: INSTALL_DIR,
    disableMods: args.disableMods
  })
  if (args.singleThreaded) {
    Object.assign(process.env, config.environmentVariables)
    await runSingle(options, args, createLogger('single'))
  } else {
    await runPrimary(options, args, createLogger('primary'))
  }
}

module.exports = { main, INSTALL_DIR }
