'use strict'

const path = require('node:path')
const { parseArgs, USAGE } = require('./cli')
const { readOptions } = require('./options')
const { configErrorLines } = require('./config-report')
const { createLogger } = require('../log')
const { fullServerString } = require('../version')
const { runPrimary } = require('./run-primary')
const { ClusterLauncher } = require('./cluster-launcher')
const { prepareMods } = require('../application/mods/prepare')
const { removeOrphans } = require('../util/private-temp')
const { tempDir, ensureTempDir, MODS_TEMP_PREFIX, UPLOADS_TEMP_PREFIX } = require('../config/server-root')
const { checkScript } = require('../application/check')
const { newTicketKeys } = require('../tls/material')
const { checkLogDirectory, LogFiles } = require('../logging')

const INSTALL_DIR = path.resolve(__dirname, '..', '..')

/**
 * Entry point of the primary (or single) process.
 * @param {string[]} argv command-line arguments after the script name
 */
async function main (argv) {
  const args = parseCommandLine(argv)
  if (args === null) return
  // Told once the logger is set up, or printed before the errors.
  const warnings = []
  const base = await loadOptions(args, warnings)
  if (base === null) return
  if (args.action !== 'check') await removeOrphanedTemp(base)
  const prepared = await prepareCode(base)
  if (prepared === null) return
  if (args.action === 'check') {
    prepared.remove()
    printWarnings(warnings)
    process.stdout.write('configuration OK: ' + args.configFile + '\n')
    return
  }
  const options = Object.freeze({ ...base, mods: prepared.mods })
  const logs = await openLogs(options, prepared)
  if (logs === null) return
  const log = createLogger(args.singleThreaded ? 'single' : 'primary', logs)
  for (const line of warnings) log.warn(line)
  warnIgnored(prepared, log)
  await ensureTempDir(options).catch((err) => log.warn('cannot make ' + tempDir(options) + ': ' + err.message +
    '; SVR.JS scripts that keep files in their __dirname will fail'))
  if (args.singleThreaded) {
    // Required here: a cluster's primary serves no request, so it never
    // loads the server and pipeline modules (a faster start).
    await require('./single').runSingle(options, args, { log, logs }, prepared)
  } else {
    await runPrimary(options, args, { log, logs }, prepared, new ClusterLauncher())
  }
}

// The parsed command line; null when it was answered here (help, version)
// or refused.
function parseCommandLine (argv) {
  let args
  try {
    args = parseArgs(argv, INSTALL_DIR)
  } catch (err) {
    process.stderr.write('svr: ' + err.message + '\n\n' + USAGE)
    process.exitCode = 2
    return null
  }
  if (args.action === 'help') {
    process.stdout.write(USAGE)
    return null
  }
  if (args.action === 'version') {
    process.stdout.write(fullServerString() + '\n')
    return null
  }
  return args
}

// The runtime options without the mods; null when they are refused (the
// warnings gathered so far are printed before the errors).
async function loadOptions (args, warnings) {
  const base = { configFile: args.configFile, installDir: INSTALL_DIR, disableMods: args.disableMods, ticketKeys: newTicketKeys() }
  try {
    return await readOptions(base, args, (line) => warnings.push(line))
  } catch (err) {
    printWarnings(warnings)
    for (const line of configErrorLines(err, args.configFile)) process.stderr.write(line + '\n')
    process.exitCode = 1
    return null
  }
}

// The script checked and the mods made ready; null when either is refused.
async function prepareCode (base) {
  try {
    await checkScript(base)
    return await prepareMods(base)
  } catch (err) {
    return fail(err.message)
  }
}

// The primary's log files, open; null when they cannot be.
async function openLogs (options, prepared) {
  const logs = new LogFiles()
  try {
    await checkLogDirectory(options)
    await logs.configure(options, null)
  } catch (err) {
    prepared.remove()
    return fail('svr: ' + err.message)
  }
  return logs
}

function printWarnings (warnings) {
  for (const line of warnings) process.stderr.write('warning: ' + line + '\n')
}

// What the steps of main return when they refuse to go on.
function fail (line) {
  process.stderr.write(line + '\n')
  process.exitCode = 1
  return null
}

// A primary or worker killed with SIGKILL cannot clean up after itself;
// the next start does.
async function removeOrphanedTemp (options) {
  await removeOrphans(MODS_TEMP_PREFIX, tempDir(options))
  await removeOrphans(UPLOADS_TEMP_PREFIX)
}

function warnIgnored (prepared, log) {
  for (const file of prepared.ignored) log.warn('ignoring ' + file + ': a mod is a .tar.gz (SVR.JS 3.x) or a .js file (SVR.JS 4.x)')
}

module.exports = { main, INSTALL_DIR }
