'use strict'

// One load run against one URL: wrk when installed (one thread, as the
// generator shares the two cores with the servers), else autocannon.

const { execFile } = require('node:child_process')

const loads = new Set()

/**
 * @typedef {{rps: number, requests: number, p99Ms: number, non2xx: number, errors: number, bytesPerSec: number}} LoadResult
 */

// A short run (the one second of --quick) on a loaded machine can end
// before the first answer came back, and would count no request at all:
// such a run is tried again over twice the time, then four times. One that
// completes nothing even then is what is measured (a row of 0 req/s), with
// a line that says so.
const EMPTY_RETRIES = 2

/**
 * @param {'wrk'|'autocannon'} tool
 * @param {{url: string, connections: number, seconds: number, headers?: object}} run
 * @returns {Promise<LoadResult>}
 */
async function runLoad (tool, run) {
  const once = tool === 'wrk' ? runWrk : runAutocannon
  let seconds = run.seconds
  for (let retry = 0; ; retry++) {
    const result = await once({ ...run, seconds })
    if (result.requests > 0) return result
    if (retry === EMPTY_RETRIES) {
      console.error(`bench: ${tool} completed no request against ${run.url} in ${seconds} s, nor in the shorter runs before`)
      return result
    }
    console.error(`bench: ${tool} completed no request against ${run.url} in ${seconds} s; trying again over ${seconds * 2} s`)
    seconds *= 2
  }
}

function runWrk ({ url, connections, seconds, headers = {} }) {
  const args = ['-t1', '-c' + connections, '-d' + seconds + 's', '--latency', '--timeout', '10s']
  for (const [name, value] of Object.entries(headers)) args.push('-H', name + ': ' + value)
  args.push(url)
  return new Promise((resolve, reject) => {
    const child = execFile('wrk', args, { timeout: (seconds + 30) * 1000 }, (err, stdout, stderr) => {
      loads.delete(child)
      if (err) return reject(new Error('wrk failed: ' + (stderr || err.message)))
      try {
        resolve(parseWrk(stdout))
      } catch (parseErr) {
        reject(parseErr)
      }
    })
    loads.add(child)
  })
}

/** Stop the wrk runs under way, when the bench is interrupted. */
function stopLoads () {
  for (const child of loads) child.kill()
}

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60000 }
const UNIT_BYTES = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 }

/**
 * @param {string} text wrk's output with --latency
 * @returns {LoadResult}
 */
function parseWrk (text) {
  const rps = text.match(/Requests\/sec:\s+([\d.]+)/)
  const requests = text.match(/(\d+) requests in /)
  const p99 = text.match(/^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$/m)
  if (!rps || !requests || !p99) throw new Error('cannot read wrk output:\n' + text)
  const non2xx = text.match(/Non-2xx or 3xx responses: (\d+)/)
  const socket = text.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/)
  const transfer = text.match(/Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/)
  return {
    rps: Number(rps[1]),
    requests: Number(requests[1]),
    p99Ms: Number(p99[1]) * UNIT_MS[p99[2]],
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
    bytesPerSec: transfer ? Number(transfer[1]) * UNIT_BYTES[transfer[2]] : 0
  }
}

async function runAutocannon ({ url, connections, seconds, headers = {} }) {
  const autocannon = require('autocannon')
  const result = await autocannon({ url, connections, duration: seconds, headers })
  return {
    rps: result.requests.average,
    requests: result.requests.total,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    bytesPerSec: result.throughput.average
  }
}

/**
 * One run of a workload against a target on the loopback interface.
 * @param {string} tool 'wrk' or 'autocannon'
 * @param {{port: number}} target
 * @param {{target: string, connections: number, headers?: object}} workload
 * @param {number} seconds
 */
function loadWorkload (tool, target, workload, seconds) {
  return runLoad(tool, {
    url: 'http://127.0.0.1:' + target.port + workload.target,
    connections: workload.connections,
    seconds,
    headers: workload.headers
  })
}

// A target is warm when three successive one-second rates spread by at most
// 5% of their median (so 70,000, 73,000 and 75,000, still climbing, are not). svr's workers reach their steady rate only after several
// seconds of load (V8 optimises Node's HTTP code and svr's own as they run
// hot: 52,000, 65,000, then 75,000 req/s in successive two-second runs of a
// fresh svr on the 404 row), where the bare cluster is steady within its
// first second; a fixed one-second warm-up measured that difference instead
// of the servers.
const WARM_STEP_S = 1
const WARM_RUNS = 3
const WARM_TOLERANCE = 0.05

/**
 * Load a target in one-second runs until its rate is steady, or for at most
 * `maxSeconds`.
 * @param {(seconds: number) => Promise<{rps: number}>} once one run of the target
 * @param {number} maxSeconds 0: no warm-up
 * @returns {Promise<{seconds: number, steady: boolean, rates: number[]}>}
 */
async function warmUp (once, maxSeconds) {
  const rates = []
  let seconds = 0
  while (seconds + WARM_STEP_S <= maxSeconds) {
    rates.push((await once(WARM_STEP_S)).rps)
    seconds += WARM_STEP_S
    if (isSteady(rates)) return { seconds, steady: true, rates }
  }
  return { seconds, steady: false, rates }
}

/**
 * @param {number[]} rates one per run, oldest first
 * @returns {boolean} whether the last WARM_RUNS spread by at most WARM_TOLERANCE of their median
 */
function isSteady (rates) {
  if (rates.length < WARM_RUNS) return false
  const last = rates.slice(-WARM_RUNS).sort((a, b) => a - b)
  const middle = last[Math.floor(WARM_RUNS / 2)]
  return middle > 0 && last[last.length - 1] - last[0] <= middle * WARM_TOLERANCE
}

/**
 * How the targets were warmed up, for the heading of a results section.
 * @param {{warmup: number}} plan
 * @returns {string}
 */
function warmupFact (plan) {
  if (plan.warmup === 0) return 'no warm-up · '
  return `each target first loaded in ${WARM_STEP_S} s runs until ${WARM_RUNS} in a row spread by at most ` +
    `${WARM_TOLERANCE * 100}% (at most ${plan.warmup} s) · `
}

module.exports = { runLoad, loadWorkload, parseWrk, stopLoads, warmUp, isSteady, warmupFact }
