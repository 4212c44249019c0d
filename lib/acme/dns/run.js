'use strict'

const { spawn } = require('node:child_process')

// What of a program's output goes into a message: its last lines.
const OUTPUT_TAIL = 400

/**
 * Run a program with arguments and standard input, without a shell.
 * @param {string} command
 * @param {string[]} args
 * @param {{input?: string, timeout: number}} opts
 * @returns {Promise<void>}
 * @throws {Error} saying how it failed: not found, timed out, or its exit status and the end of its output
 */
function runProgram (command, args, { input = '', timeout }) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], timeout, killSignal: 'SIGKILL' })
    let output = ''
    const collect = (chunk) => { output = (output + chunk).slice(-OUTPUT_TAIL * 2) }
    child.stdout.on('data', collect)
    child.stderr.on('data', collect)
    child.on('error', (err) => reject(new Error(command + ' cannot be run (' + (err.code || err.message) + ')')))
    child.on('close', (code, signal) => {
      if (code === 0) return resolve()
      const said = output.trim().slice(-OUTPUT_TAIL).replace(/\s*\n\s*/g, ' | ')
      const how = signal === 'SIGKILL' ? 'did not finish within ' + timeout / 1000 + ' s' : signal !== null ? 'was killed by ' + signal : 'exited with ' + code
      reject(new Error(command + ' ' + how + (said === '' ? '' : ': ' + said)))
    })
    // A program that does not read its input closes the pipe: not a failure in itself.
    child.stdin.on('error', () => {})
    child.stdin.end(input)
  })
}

module.exports = { runProgram }
