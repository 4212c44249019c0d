'use strict'

const path = require('node:path')
const { parseArgs, USAGE } = require('./cli')
const { loadConfig } = require('./config/load')
const { checkWebroot } = require('./config/webroot')
const { configErrorLines } = require('./config-report')
const { createLogger } = require('./log')
const { fullServerString } = require('./version')
const { runPrimary } = require('./primary')
const { withOverrides } = require('./reload')
const { prepareMods } = require('./mods/prepare')
const { removeOrphans, MODS_TEMP_PREFIX, UPLOADS_TEMP_PREFIX } = require('./util/private-temp')
const { tempDir, ensureTempDir } = require('./server-root')
const { checkScript } = require('./script/check')
const { readTlsMaterial, newTicketKeys } = require('./tls/material')
const { checkLogDirectory, LogFiles } = require('./logging')
const { AccessLog } = require('./logging/access-log')

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
  // Told once the logger is set up, or printed before the errors.
  const warnings = []
  try {
    const warn = (line) => warnings.push(args.configFile + ': ' + line)
    config = withOverrides(await loadConfig(args.configFile, { installDir: INSTALL_DIR, warn }), args)
    await checkWebroot(args.configFile, config)
  } catch (err) {
    for (const line of warnings) process.stderr.write('warning: ' + line + '\n')
    for (const line of configErrorLines(err, args.configFile)) process.stderr.write(line + '\n')
    process.exitCode = 1
    return
  }
  let tls = null
  const ticketKeys = newTicketKeys()
  try {
    // Read by the primary, handed to the workers (lib/tls/material.js).
    if (config.secure) tls = await readTlsMaterial(config, ticketKeys)
  } catch (err) {
    process.stderr.write(err.message + '\n')
    process.exitCode = 1
    return
  }
  const base = {
    config,
    configFile: args.configFile,
    installDir: INSTALL_DIR,
    disableMods: args.disableMods,
    mods: [],
    tls,
    ticketKeys
  }
  if (args.action !== 'check') await removeOrphanedTemp(base)
  let prepared
  try {
    await checkScript(base)
    prepared = await prepareMods(base)
  } catch (err) {
    process.stderr.write(err.message + '\n')
    process.exitCode = 1
    return
  }
  if (args.action === 'check') {
    prepared.remove()
    for (const line of warnings) process.stderr.write('warning: ' + line + '\n')
    process.stdout.write('configuration OK: ' + args.configFile + '\n')
    return
  }
  const options = Object.freeze({ ...base, mods: prepared.mods })
  // The access log of --single-threaded's one worker opens with the event log.
  const accessLog = args.singleThreaded ? new AccessLog('single') : null
  const logs = new LogFiles()
  try {
    await checkLogDirectory(options)
    await logs.configure(options, accessLog)
  } catch (err) {
    process.stderr.write('svr: ' + err.message + '\n')
    prepared.remove()
    process.exitCode = 1
    return
  }
  const log = createLogger(args.singleThreaded ? 'single' : 'primary', logs)
  for (const line of warnings) log.warn(line)
  warnIgnored(prepared, log)
  await ensureTempDir(options).catch((err) => log.warn('cannot make ' + tempDir(options) + ': ' + err.message +
    '; SVR.JS scripts that keep files in their __dirname will fail'))
  if (args.singleThreaded) {
    Object.assign(process.env, config.environmentVariables)
    // Required here: a cluster's primary serves no request, so it never
    // loads the server and pipeline modules (a faster start).
    await require('./single').runSingle(options, args, { log, logs, accessLog }, prepared)
  } else {
    await runPrimary(options, args, { log, logs }, prepared)
  }
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
