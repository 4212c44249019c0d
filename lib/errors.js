'use strict'

const { format } = require('node:util')

/**
 * Every error svr raises on purpose has a code from this table. Programmer
 * errors keep their native class; operator-facing ones (config, boot, listen)
 * carry enough context to print one actionable line. docs/errors.md lists the
 * same codes, and test/unit/errors.test.js keeps the two in step.
 */
const CODES = {
  SVR_ERR_ACME_CHALLENGE: { message: 'the CA offers no %s challenge for %s' },
  SVR_ERR_ACME_DNS_PROPAGATION: { message: 'the dns-01 record %s did not appear within %d s at %s' },
  SVR_ERR_ACME_ORDER: { message: 'acme: %s: order failed (attempt %d): %s' },
  SVR_ERR_ACME_UNREACHABLE: { message: 'cannot reach the CA: %s' },
  SVR_ERR_ACME_UNTRUSTED: { message: 'the CA\'s HTTPS certificate does not verify (%s): a CA with a private root (a test or in-house CA) needs its root certificate in the PEM file named by acme.caBundle' },
  SVR_ERR_BAD_FLAG: { message: 'unknown command-line flag: %s' },
  SVR_ERR_CONFIG_INVALID: { message: '%s: configuration is invalid' },
  SVR_ERR_CONFIG_PARSE: { message: '%s: invalid JSON: %s' },
  SVR_ERR_CONFIG_READ: { message: '%s: cannot read configuration file: %s' },
  SVR_ERR_IPC_FAILED: { message: '%s failed in the other process: %s' },
  SVR_ERR_IPC_GONE: { message: 'cannot ask %s: the other process is gone' },
  SVR_ERR_IPC_TIMEOUT: { message: 'no answer to %s within %d ms' },
  SVR_ERR_LISTEN: { message: 'cannot listen on %s: %s' },
  SVR_ERR_MOD_LOAD: { message: 'mod %s failed to load: %s' },
  SVR_ERR_PROXY_BODY_LIMIT: { message: 'request body exceeds the %d bytes the proxy route forwards' },
  SVR_ERR_SCRIPT_LOAD: { message: 'server-side script %s failed to load: %s' },
  SVR_ERR_SHUTDOWN_TIMEOUT: { message: 'workers still busy after %d ms, forcing exit' },
  SVR_ERR_TLS_FILE: { message: 'cannot use TLS file for %s (%s): %s' },
  SVR_ERR_WORKER_BOOT: { message: 'worker failed to start: %s' },
  SVR_ERR_WORKER_CRASH_LOOP: { message: 'worker slot %d keeps crashing (%d exits in a row)' }
}

class SvrError extends Error {
  constructor (code, args, options) {
    const entry = CODES[code]
    if (entry === undefined) throw new TypeError('unknown svr error code ' + code)
    super(format(entry.message, ...args), options)
    this.name = 'SvrError'
    this.code = code
  }
}

/**
 * @param {string} code a key of CODES
 * @param {Array} [args] values for the message's format specifiers
 * @param {{cause?: Error}} [options]
 * @returns {SvrError}
 */
function svrError (code, args = [], options) {
  return new SvrError(code, args, options)
}

// Why a file svr must read (the configuration, a certificate) could not be
// read, in words for the message that names it.
const READ_REASONS = {
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
  ENOENT: 'no such file',
  ENOTDIR: 'a component of the path is not a directory',
  EPERM: 'operation not permitted'
}

/**
 * @param {Error & {code?: string}} err from reading a file
 * @returns {string}
 */
function readFailure (err) {
  return READ_REASONS[err.code] || err.message
}

/**
 * @param {string} file
 * @param {string[]} problems "<JSON pointer>: <message>" lines
 * @returns {SvrError} SVR_ERR_CONFIG_INVALID
 */
function invalidConfig (file, problems) {
  const err = svrError('SVR_ERR_CONFIG_INVALID', [file])
  err.file = file
  err.problems = problems
  return err
}

module.exports = { CODES, SvrError, svrError, readFailure, invalidConfig }
