'use strict'

// The TLS and HTTP/2 rows of `npm run bench -- --tls`: svr with `secure`
// and `enableHTTP2` (2 workers, access log on) side by side with nginx
// (TLS, HTTP/2, shared session cache and tickets) and, for HTTP/2, a bare
// Node HTTP/2 server on the stream API (bench/bare-h2.js), targets
// alternating, median shown, as ratios.

const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const path = require('node:path')
const selfsigned = require('selfsigned')
const { startSvr, startBareH2, startNginx, stop, hasCommand, sleep } = require('./targets')
const { runLoad, warmUp, warmupFact } = require('./load')

const HEADING = '## TLS and HTTP/2'
// Requests per second assumed of a target before its first run.
const FIRST_RATE = 5000
// Parallel openssl s_time clients: one per core, as the servers have workers.
const HANDSHAKE_CLIENTS = 2

/**
 * The rows: how they load svr and whom svr is compared with. A row with
 * two baselines is two lines of the table, one ratio each.
 */
const TLS_WORKLOADS = [
  {
    name: 'h2-static-1k',
    load: 'h2load',
    target: '/1k.html',
    what: 'static 1 KiB over HTTP/2 (`h2load -c50 -m10 -D`)',
    baselines: [{ name: 'nginx tls', goal: 0.5 }, { name: 'bare h2', goal: 0.75 }, { name: 'bare h2 + svr headers', goal: null }]
  },
  {
    name: 'h2-static-1k-script',
    load: 'h2load',
    target: '/1k.html',
    svr: 'svr + script',
    what: 'static 1 KiB over HTTP/2, the site\'s serverSideScript.js running first (`h2load -c50 -m10 -D`)',
    baselines: [{ name: 'nginx tls', goal: null }]
  },
  {
    name: 'https-static-1k',
    load: 'wrk',
    target: '/1k.html',
    what: 'static 1 KiB over HTTPS/1.1 (`wrk -c50`)',
    baselines: [{ name: 'nginx tls', goal: 0.7 }]
  },
  {
    name: 'tls-new',
    load: 'handshakes',
    reuse: false,
    target: '/1k.html',
    what: `new TLS connections per second, one request each, full handshakes (\`openssl s_time -new\`, ${HANDSHAKE_CLIENTS} clients)`,
    baselines: [{ name: 'nginx tls', goal: null }]
  },
  {
    name: 'tls-resumed',
    load: 'handshakes',
    reuse: true,
    target: '/1k.html',
    what: `new TLS connections per second, one request each, sessions resumed (\`openssl s_time -reuse\`, ${HANDSHAKE_CLIENTS} clients)`,
    baselines: [{ name: 'nginx tls', goal: null }]
  }
]

/**
 * Measure the rows, the targets of each side by side, A B A B.
 * @param {{site: {webroot: string, configFile: string}, dir: string, plan: {seconds: number, warmup: number, rounds: number}, only: Set<string>|null}} run
 * @returns {Promise<{rows: object[], tools: object}>}
 */
async function measureTls ({ site, dir, plan, only }) {
  const missing = []
  for (const tool of ['h2load', 'openssl']) if (!await hasCommand(tool)) missing.push(tool)
  if (missing.length > 0) throw new Error('the TLS rows need ' + missing.join(' and ') + ' (apt-get install nghttp2-client openssl)')
  const workloads = TLS_WORKLOADS.filter((w) => only === null || only.has(w.name))
  const tls = await makeCertificate(dir)
  const targets = new Map()
  try {
    const configs = await secureConfigs(site, dir, tls)
    targets.set('svr', await startSvr(site, dir, { name: 'svr', configFile: configs.static, scheme: 'https', ready: '/1k.html' }))
    if (workloads.some((w) => w.svr === 'svr + script')) {
      targets.set('svr + script', await startSvr(site, dir, { name: 'svr + script', configFile: configs.script, scheme: 'https' }))
    }
    const nginx = await startNginx(dir, site.webroot, { tls })
    if (nginx !== null) targets.set(nginx.name, nginx)
    if (workloads.some((w) => w.baselines.some((b) => b.name === 'bare h2'))) {
      const file = path.join(site.webroot, '1k.html')
      targets.set('bare h2', await startBareH2(dir, file, tls))
      targets.set('bare h2 + svr headers', await startBareH2(dir, file, tls, true))
    }
    const rows = []
    for (const workload of workloads) rows.push(...await measureWorkload(workload, targets, plan))
    return { rows }
  } finally {
    for (const target of targets.values()) await stop(target.proc)
  }
}

// svr's bench config, secure, with HTTP/2 and the plain server off: in a
// directory of its own, where no serverSideScript.js is (a static site, as
// nginx serves it), and beside the site's script.
async function secureConfigs (site, dir, tls) {
  const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
  const text = JSON.stringify({
    ...config,
    secure: true,
    enableHTTP2: true,
    disableNonEncryptedServer: true,
    sport: '127.0.0.1:0',
    cert: tls.cert,
    key: tls.key
  }, null, 2)
  const staticDir = path.join(dir, 'tls-static')
  await fs.mkdir(staticDir, { recursive: true })
  const configs = { static: path.join(staticDir, 'config.json'), script: path.join(dir, 'config-tls.json') }
  await fs.writeFile(configs.static, text)
  await fs.writeFile(configs.script, text)
  return configs
}

async function makeCertificate (dir) {
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' })
  const tls = { cert: path.join(dir, 'bench-cert.pem'), key: path.join(dir, 'bench-key.pem') }
  await fs.writeFile(tls.cert, pems.cert)
  await fs.writeFile(tls.key, pems.private, { mode: 0o644 })
  return tls
}

async function measureWorkload (workload, targets, plan) {
  const svrName = workload.svr || 'svr'
  const order = [targets.get(svrName), ...workload.baselines.map((b) => targets.get(b.name)).filter(Boolean)]
  const runs = new Map(order.map((target) => [target.name, []]))
  // The count of requests h2load falls back to (see h2loadRun): as many as
  // the target served in its last run per second, times the seconds wanted.
  const rates = new Map(order.map((target) => [target.name, FIRST_RATE]))
  const once = async (target, seconds) => {
    const result = await loadOnce(workload, target, seconds, rates.get(target.name))
    rates.set(target.name, Math.max(result.rps, FIRST_RATE))
    return result
  }
  for (const target of order) {
    const warm = await warmUp((seconds) => once(target, seconds), plan.warmup)
    if (plan.warmup > 0) console.error(`${workload.name}: ${target.name} ${warm.steady ? 'steady' : 'not yet steady'} after ${warm.seconds} s of warm-up`)
  }
  for (let round = 0; round < plan.rounds; round++) {
    for (const target of round % 2 === 0 ? order : [...order].reverse()) {
      runs.get(target.name).push(await once(target, plan.seconds))
      await sleep(200)
    }
  }
  const svr = median(runs.get(svrName))
  return workload.baselines.map(({ name, goal }) => {
    const baseline = runs.has(name) ? median(runs.get(name)) : null
    const row = { workload, svr, baselineName: name, baseline, goal }
    console.error(`${workload.name}: svr ${svr.rps.toFixed(0)}/s, ${name} ${baseline === null ? 'n/a' : baseline.rps.toFixed(0) + '/s, ratio ' + (svr.rps / baseline.rps).toFixed(2)}`)
    return row
  })
}

/**
 * @returns {Promise<{rps: number, errors: number}>} per second: requests, or connections for handshakes
 *   (h2load's also: requests, non2xx)
 */
function loadOnce (workload, target, seconds, rate) {
  const url = 'https://127.0.0.1:' + target.port + workload.target
  if (workload.load === 'h2load') return h2loadRun(url, seconds, rate)
  if (workload.load === 'wrk') return runLoad('wrk', { url, connections: 50, seconds })
  return handshakes(target.port, workload.target, workload.reuse, seconds)
}

// Requests per second over a fixed time (-D), as wrk measures. A count of
// requests (-n) is split evenly over the 50 connections and the run lasts
// until the slowest connection is done: when a server's workers got unequal
// shares of the 50 sessions (37 and 13 seen with svr's shared accept queue),
// the run ends long after the lighter worker went idle, and the rate
// measures the split more than the server (svr 8,000-27,000 req/s in -n runs
// where timed runs of the same server gave 25,000-34,000).
//
// h2load's timed mode (1.52, Debian 12's) sometimes does not end: on a
// loaded machine (two busy loops on the two cores), between one run in
// eight and one in three stopped all its clients and then went on
// requesting over a few connections (stream ids still rising on the
// server) and never printed its report. svr and the bare Node server
// (bench/bare-h2.js) both saw it, and neither was busy once h2load was
// gone; h2load's own -N and -T timeouts did not end such a run. A healthy
// run ends within about 0.1 s of its window, so one that outlasts it by
// H2LOAD_GRACE_S is ended and tried again, up to H2LOAD_TIMED_TRIES times,
// the later tries over twice the window (a short window on a busy machine
// can also end before a single request did). Only when all fail is the
// rate measured by count.
const H2LOAD_GRACE_S = 10
const H2LOAD_TIMED_TRIES = 3

/**
 * @param {string} url
 * @param {number} seconds the window
 * @param {number} rate requests per second expected, for the count fallback
 * @param {{graceS?: number}} [opts] how long past its window a run may go on
 * @returns {Promise<{rps: number, requests: number, non2xx: number, errors: number}>}
 */
async function h2loadRun (url, seconds, rate, { graceS = H2LOAD_GRACE_S } = {}) {
  let failure = null
  for (let attempt = 0; attempt < H2LOAD_TIMED_TRIES; attempt++) {
    const window = attempt === 0 ? seconds : seconds * 2
    try {
      const result = await h2load(['-c50', '-m10', '-D', String(window), url], (window + graceS) * 1000)
      if (result.rps > 0) return result
      failure = new Error('no request completed in ' + window + ' s')
    } catch (err) {
      failure = err
    }
    console.error('h2load -D ' + window + ' failed: ' + failure.message.split('\n')[0])
  }
  console.error('h2load -D failed ' + H2LOAD_TIMED_TRIES + ' times, measuring by count: ' + failure.message.split('\n')[0])
  return h2load(['-c50', '-m10', '-n', String(Math.round(rate * seconds)), url], 120000)
}

function h2load (args, timeout) {
  return new Promise((resolve, reject) => {
    execFile('h2load', args, { timeout, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      const finished = stdout.match(/finished in [\d.]+m?s, ([\d.]+) req\/s/)
      if (err && err.killed) return reject(new Error(`h2load ${args.join(' ')} did not end within ${timeout / 1000} s`))
      if (err && !finished) return reject(new Error('h2load failed: ' + (stderr || err.message) + '\n' + stdout))
      const requests = stdout.match(/requests: \d+ total, \d+ started, (\d+) done, \d+ succeeded, (\d+) failed, (\d+) errored/)
      if (!finished || !requests) return reject(new Error('cannot read h2load output:\n' + stdout))
      // As wrk counts them: requests completed, and answers of 4xx or 5xx.
      const statuses = stdout.match(/status codes: \d+ 2xx, \d+ 3xx, (\d+) 4xx, (\d+) 5xx/)
      resolve({
        rps: Number(finished[1]),
        requests: Number(requests[1]),
        non2xx: statuses ? Number(statuses[1]) + Number(statuses[2]) : 0,
        errors: Number(requests[2]) + Number(requests[3])
      })
    })
  })
}

// Connections per second of HANDSHAKE_CLIENTS s_time processes at once,
// over the wall time they took (s_time prints whole seconds only).
async function handshakes (port, target, reuse, seconds) {
  const begun = process.hrtime.bigint()
  const counts = await Promise.all(Array.from({ length: HANDSHAKE_CLIENTS }, () => sTime(port, target, reuse, seconds)))
  const elapsed = Number(process.hrtime.bigint() - begun) / 1e9
  return { rps: counts.reduce((sum, n) => sum + n, 0) / elapsed, errors: 0 }
}

function sTime (port, target, reuse, seconds) {
  const args = ['s_time', '-connect', '127.0.0.1:' + port, '-www', target, reuse ? '-reuse' : '-new', '-time', String(seconds)]
  return new Promise((resolve, reject) => {
    execFile('openssl', args, { timeout: (seconds + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error('openssl s_time failed: ' + (stderr || err.message)))
      const done = stdout.match(/(\d+) connections in [\d.]+s;/)
      if (!done) return reject(new Error('cannot read openssl s_time output:\n' + stdout))
      resolve(Number(done[1]))
    })
  })
}

function median (runs) {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

/**
 * @param {object[]} rows from measureTls
 * @param {{plan: object, date: string}} facts
 * @returns {string} the `## TLS and HTTP/2` section
 */
function renderTls (rows, { plan, date }) {
  const lines = [
    HEADING,
    '',
    `${date} · ${warmupFact(plan)}${plan.rounds} × ${plan.seconds} s per target, targets alternating, median shown · svr with ` +
      '`secure`, `enableHTTP2`, 2 workers and the default pipeline (access log on), serving the site without ' +
      'application code (a static site, as nginx serves it) except on the row that says so; nginx with 2 workers, TLS, ' +
      'HTTP/2, a shared session cache and tickets; the bare HTTP/2 server (bench/bare-h2.js) with 2 workers on ' +
      'the stream API, answering from memory, and the same sending svr\'s default headers too (Server, a random ' +
      'X-Request-Id, X-Content-Type-Options, ETag, Accept-Ranges), which tells what those cost from what svr\'s own ' +
      'code costs. One self-signed P-256 certificate for all.',
    '',
    '| workload | svr /s | baseline | baseline /s | ratio | target | met |',
    '|---|---:|---|---:|---:|---:|---|'
  ]
  for (const { workload, svr, baselineName, baseline, goal } of rows) {
    const ratio = baseline === null ? null : svr.rps / baseline.rps
    lines.push(`| ${workload.what} | ${svr.rps.toFixed(0)} | ${baselineName} | ${baseline === null ? 'n/a' : baseline.rps.toFixed(0)} | ` +
      `${ratio === null ? 'n/a' : ratio.toFixed(2)} | ${goal === null ? '—' : '≥ ' + goal} | ` +
      `${goal === null || ratio === null ? '—' : ratio >= goal ? 'yes' : 'no'} |`)
  }
  const errors = rows.filter((row) => row.svr.errors > 0)
  if (errors.length > 0) lines.push('', 'Failed requests at svr: ' + errors.map((row) => `${row.workload.name} (${row.svr.errors})`).join(', ') + '.')
  lines.push('')
  return lines.join('\n')
}

module.exports = { measureTls, renderTls, h2loadRun, secureConfigs, makeCertificate, TLS_WORKLOADS, TLS_HEADING: HEADING }
