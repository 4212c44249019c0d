'use strict'

// Running the benchmark harness from the tests (test/bench/smoke*.test.js).

const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const RESULTS = path.join(ROOT, 'bench', 'results.md')
// A --quick run takes 5-15 s on an idle 2-core machine and several times
// that while another test suite loads it.
const TIMEOUT_MS = 100000

/**
 * Run the harness; past the timeout it gets SIGINT, on which it stops the
 * servers it started, and SIGKILL if it is still there 10 s later.
 */
function runBench (args, env = {}, timeoutMs = TIMEOUT_MS) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join('bench', 'run.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    let killer = null
    const timer = setTimeout(() => {
      child.kill('SIGINT')
      killer = setTimeout(() => child.kill('SIGKILL'), 10000)
    }, timeoutMs)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      clearTimeout(killer)
      if (killer !== null) return reject(new Error(`bench/run.js took over ${timeoutMs} ms:\n${stderr}`))
      resolve({ code, signal, stdout, stderr })
    })
  })
}

// The cells of the table row whose first cell is `what`.
function row (stdout, what) {
  const line = stdout.split('\n').find((l) => l.startsWith('| ' + what + ' |'))
  assert.ok(line, `no row "${what}" in:\n${stdout}`)
  return line.split('|').slice(1, -1).map((cell) => cell.trim())
}

/**
 * Assert that a printed ratio (two decimals) is one printed rate over
 * another. The report divides the rates before rounding them to whole
 * requests, so the quotient of the printed ones may round the other way
 * (1.645 shown as 1.64, the printed rates giving 1.6451): it is allowed
 * half a unit of the last decimal and what the rounding of the rates moves.
 * @param {string} ratio e.g. '1.64'
 * @param {string} over the printed rate on top
 * @param {string} under the printed rate below
 */
function assertRatio (ratio, over, under) {
  const exact = Number(over) / Number(under)
  const slack = 0.005 + (0.5 / Number(under)) * (1 + exact) + 1e-9
  assert.match(ratio, /^\d+\.\d\d$/)
  assert.ok(Math.abs(Number(ratio) - exact) <= slack, `ratio ${ratio} is not ${over} / ${under} (${exact})`)
}

async function stamp (file) {
  try {
    const stat = await fs.stat(file)
    return stat.mtimeMs + ':' + stat.size
  } catch (err) {
    if (err.code === 'ENOENT') return 'absent'
    throw err
  }
}

module.exports = { runBench, row, assertRatio, stamp, ROOT, RESULTS, TIMEOUT_MS }
