'use strict'

// How HTTP/2 sessions spread over two workers, and what that does to the
// rate from one run to the next: svr (secure, enableHTTP2, 2 workers) and
// the bare HTTP/2 cluster of bench/bare-h2.js, each loaded RUNS times with
// `h2load -c50 -m10` for a few seconds, after loading each until its rate is
// steady, as the bench's rows are (svr's workers take several seconds to
// reach their steady rate, the bare server about one: cold, svr's first runs
// would count as spread). During each run `ss` counts the established
// sessions of each worker process. Prints one row per server: the busiest
// worker's share of the sessions in each run, and the rates.
// node bench/spread.js [--runs N] [--seconds S] [--warmup S]
// Needs h2load (apt-get install -y nghttp2-client), ss (iproute2) and openssl.

const { spawn, execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { promisify } = require('node:util')
const { ServerOutput } = require('./server-output')
const { warmUp } = require('./load')

const run = promisify(execFile)
const ROOT = path.join(__dirname, '..')
const SVR_PORT = 18630
const BARE_PORT = 18631

function option (name, fallback) {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Start a server; resolves once it printed its listening line. */
async function start (args, cwd) {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  await new ServerOutput(child).waitFor(/listening on https:/)
  return child
}

/** @returns {Promise<number[]>} established sessions on `port` per process, most first */
async function sessionsPerProcess (port) {
  const { stdout } = await run('ss', ['-tnpH', 'state', 'established', '( sport = :' + port + ' )'])
  const counts = new Map()
  for (const match of stdout.matchAll(/pid=(\d+)/g)) counts.set(match[1], (counts.get(match[1]) || 0) + 1)
  return [...counts.values()].sort((a, b) => b - a)
}

// h2load waits for every session it opened to finish its requests; one it
// opened late in a short run was seen to go on for half an hour. A run that
// outlasts its time by this much is ended and fails the measurement.
const H2LOAD_GRACE_S = 20

async function h2load (port, seconds) {
  try {
    return await run('h2load', ['-c50', '-m10', '-D', String(seconds), 'https://127.0.0.1:' + port + '/1k.html'],
      { timeout: (seconds + H2LOAD_GRACE_S) * 1000, killSignal: 'SIGKILL' })
  } catch (err) {
    if (err.killed) throw new Error(`h2load -D ${seconds} on port ${port} did not end within ${seconds + H2LOAD_GRACE_S} s`)
    throw err
  }
}

function rateOf (stdout) {
  return Number(/finished in [^,]+, ([\d.]+) req\/s/.exec(stdout)[1])
}

async function loadOnce (port, seconds) {
  const load = h2load(port, seconds)
  await sleep(seconds * 500)
  const sessions = await sessionsPerProcess(port)
  const rate = rateOf((await load).stdout)
  const total = sessions.reduce((sum, n) => sum + n, 0)
  return { rate, busiest: total === 0 ? 0 : sessions[0] / total, sessions }
}

function summary (name, results) {
  const rates = results.map((r) => r.rate)
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length
  const spread = (Math.max(...rates) - Math.min(...rates)) / mean
  return '| ' + name + ' | ' + Math.round(mean) + ' | ' + (spread * 100).toFixed(0) + ' % | ' +
    (Math.max(...results.map((r) => r.busiest)) * 100).toFixed(0) + ' % | ' +
    results.map((r) => r.sessions.join('/')).join(', ') + ' |'
}

async function main () {
  const runs = option('--runs', 10)
  const seconds = option('--seconds', 4)
  const warmup = option('--warmup', 20)
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-spread-'))
  const children = []
  try {
    await fs.mkdir(path.join(dir, 'www'))
    await fs.writeFile(path.join(dir, 'www', '1k.html'), 'x'.repeat(1024))
    await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
      '-subj', '/CN=localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')])
    await fs.writeFile(path.join(dir, 'config.json'), JSON.stringify({
      secure: true,
      enableHTTP2: true,
      disableNonEncryptedServer: true,
      sport: '127.0.0.1:' + SVR_PORT,
      cert: path.join(dir, 'cert.pem'),
      key: path.join(dir, 'key.pem'),
      wwwroot: path.join(dir, 'www'),
      workers: 2,
      enableLogging: false
    }))
    children.push(await start([path.join(ROOT, 'svr.js'), '--config', path.join(dir, 'config.json')], dir))
    children.push(await start([path.join(__dirname, 'bare-h2.js'), String(BARE_PORT), path.join(dir, 'www', '1k.html'),
      path.join(dir, 'cert.pem'), path.join(dir, 'key.pem'), 'svr-headers'], dir))
    const warm = []
    for (const [name, port] of [['svr', SVR_PORT], ['bare', BARE_PORT]]) {
      const { seconds: took, steady, rates } = await warmUp(async (s) => ({ rps: rateOf((await h2load(port, s)).stdout) }), warmup)
      warm.push(name + ' ' + (steady ? 'steady' : 'not steady') + ' after ' + took + ' s (' + rates.map(Math.round).join(', ') + ' req/s)')
    }
    const results = { svr: [], bare: [] }
    // Alternate, so that both see the same moments of the machine.
    for (let i = 0; i < runs; i++) {
      results.svr.push(await loadOnce(SVR_PORT, seconds))
      results.bare.push(await loadOnce(BARE_PORT, seconds))
    }
    console.log('cpu: ' + os.cpus()[0].model + ', ' + os.cpus().length + ' cores; ' + runs + ' runs of h2load -c50 -m10 -D ' + seconds)
    console.log('warm-up, in one-second runs: ' + warm.join('; '))
    console.log('| server | mean req/s | spread of the rate (max − min) / mean | busiest worker\'s sessions, worst run | sessions per worker, each run |')
    console.log('|---|---:|---:|---:|---|')
    console.log(summary('svr', results.svr))
    console.log(summary('bare HTTP/2 cluster, svr\'s headers', results.bare))
  } finally {
    for (const child of children) child.kill('SIGTERM')
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err.message)
    process.exitCode = 1
  })
}
