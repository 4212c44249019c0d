'use strict'

// `npm run bench -- --own`: svr's own CPU per request. For each workload,
// the CPU time svr's processes spend per request, and that of a bare Node
// cluster sending svr's very answers (bench/bare-replay.js), measured in
// the same rounds: the difference is what svr's own code costs, a number a
// change to svr moves and that a faster or slower processor changes far
// less than it changes a ratio of rates against nginx. With --against, the
// svr of another checkout is measured in the same rounds over the same
// baseline. The section itself: bench/own-report.js.

const fs = require('node:fs/promises')
const http = require('node:http')
const https = require('node:https')
const http2 = require('node:http2')
const path = require('node:path')
const { startSvr, startBareReplay, stop, measuredRun, hasCommand, sleep } = require('./targets')
const { runLoad, warmUp } = require('./load')
const { h2loadRun, secureConfigs, makeCertificate } = require('./tls')
const { pairsOf } = require('./replay-answers')
const { ownOf, runIssue } = require('./own-report')

// Requests per second assumed of a target before its first run, for
// h2load's fallback to a count of requests (bench/tls.js h2loadRun).
const FIRST_RATE = 5000
const CONNECTIONS = 50

/**
 * The workloads: path, how it is loaded, the status svr must answer.
 * `scheme` https: the secure svr (HTTP/2 enabled), which wrk speaks
 * HTTP/1.1 to (it offers no ALPN) and h2load HTTP/2.
 */
const OWN_WORKLOADS = [
  { name: 'hello', scheme: 'http', path: '/hello', load: 'wrk', status: 200, what: 'hello world from serverSideScript.js (HTTP/1.1, `wrk -c50`)' },
  { name: '404', scheme: 'http', path: '/missing', load: 'wrk', status: 404, what: '404 (HTTP/1.1, `wrk -c50`)' },
  { name: 'static-1k', scheme: 'http', path: '/1k.html', load: 'wrk', status: 200, what: 'static 1 KiB file (HTTP/1.1, `wrk -c50`)' },
  { name: 'https-static-1k', scheme: 'https', path: '/1k.html', load: 'wrk', status: 200, what: 'static 1 KiB file (HTTPS/1.1, `wrk -c50`)' },
  { name: 'h2-static-1k', scheme: 'https', path: '/1k.html', load: 'h2load', status: 200, what: 'static 1 KiB file (HTTP/2 over TLS, `h2load -c50 -m10 -D`)' }
]

/**
 * Measure the workloads on svr, the replay of its answers and, with
 * `against`, the svr of another checkout: each warmed up, then loaded in
 * alternating order (A B C, C B A) round by round.
 * @param {{site: {configFile: string}, dir: string, plan: {seconds: number, warmup: number, rounds: number},
 *   only: Set<string>|null, against?: {svr: string, config: object}|null}} run
 * @returns {Promise<object[]>} a row per workload: workload, svr, baseline, against (the median runs, with cpuUs),
 *   runs (each target's in round order), issues
 */
async function measureOwn ({ site, dir, plan, only, against = null }) {
  const missing = []
  for (const tool of ['wrk', 'h2load']) if (!await hasCommand(tool)) missing.push(tool)
  if (missing.length > 0) throw new Error('--own needs ' + missing.join(' and ') + ' (apt-get install wrk nghttp2-client)')
  const workloads = OWN_WORKLOADS.filter((w) => only === null || only.has(w.name))
  const started = []
  try {
    const sides = await startSides({ site, dir, workloads, against, started })
    const rates = new Map()
    const rows = []
    for (const workload of workloads) rows.push(await measureWorkload(workload, sides[workload.scheme], plan, rates))
    return rows
  } finally {
    for (const target of started) await stop(target.proc)
  }
}

/**
 * For each scheme the workloads use: svr, its answers recorded and the
 * replay of them started, and the svr of --against; every target started
 * is put on `started`, to be stopped.
 * @returns {Promise<object>} scheme → {svr, baseline, against}
 */
async function startSides ({ site, dir, workloads, against, started }) {
  const keep = async (starting) => {
    const target = await starting
    started.push(target)
    return target
  }
  const schemes = [...new Set(workloads.map((w) => w.scheme))]
  const tls = schemes.includes('https') ? await makeCertificate(dir) : null
  const configs = await ownConfigs(site, dir, tls, against)
  const sides = {}
  for (const scheme of schemes) {
    const secure = scheme === 'https' ? { scheme, ready: '/1k.html' } : {}
    const suffix = scheme === 'https' ? ' tls' : ''
    const svr = await keep(startSvr(site, dir, { name: 'svr' + suffix, configFile: configs.svr[scheme], ...secure }))
    // Before any load, so that the replay sends what svr sent a fresh client.
    const answers = path.join(dir, `answers-${scheme === 'https' ? 'tls' : 'http'}.json`)
    await fs.writeFile(answers, JSON.stringify(await recordAnswers(workloads.filter((w) => w.scheme === scheme), svr), null, 2))
    const baseline = await keep(startBareReplay(dir, answers, scheme === 'https' ? tls : null))
    const other = against === null
      ? null
      : await keep(startSvr(site, dir, { name: 'against' + suffix, configFile: configs.against[scheme], svr: against.svr, ...secure }))
    sides[scheme] = { svr, baseline, against: other }
  }
  return sides
}

// The site's config for HTTP, and tls.js's secure one (no script beside
// it) for HTTPS and HTTP/2; for --against the same with its overrides
// (keys an older build does not know), the HTTP one beside the site's
// script as the site's own is.
async function ownConfigs (site, dir, tls, against) {
  const configs = { svr: { http: site.configFile }, against: null }
  if (tls !== null) configs.svr.https = (await secureConfigs(site, dir, tls)).static
  if (against === null) return configs
  const againstHttp = path.join(dir, 'config-against.json')
  const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
  await fs.writeFile(againstHttp, JSON.stringify({ ...config, ...against.config }, null, 2))
  configs.against = { http: againstHttp }
  if (tls !== null) configs.against.https = (await secureConfigs({ configFile: againstHttp }, path.join(dir, 'against'), tls)).static
  return configs
}

/**
 * svr's answer to each workload's path, one request each, in the format of
 * bench/replay-answers.js: over HTTP/1.1, and for a secure svr over HTTP/2
 * too. An answer of another status than the workload's stops the run: the
 * rows would measure something else.
 * @returns {Promise<object>} path → {h1, h2?}
 */
async function recordAnswers (workloads, svr) {
  const answers = {}
  for (const workload of workloads) {
    if (workload.path in answers) continue
    const recorded = { h1: await fetchH1(workload.scheme, svr.port, workload.path) }
    if (workload.scheme === 'https') recorded.h2 = await fetchH2(svr.port, workload.path)
    for (const [protocol, answer] of Object.entries(recorded)) {
      if (answer.status === workload.status) continue
      throw new Error(`--own: ${svr.name} answered GET ${workload.path} over ${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'} ` +
        `with ${answer.status}, where the workload ${workload.name} expects ${workload.status}`)
    }
    answers[workload.path] = recorded
  }
  return answers
}

function fetchH1 (scheme, port, target) {
  const client = scheme === 'https' ? https : http
  return new Promise((resolve, reject) => {
    const req = client.get({ host: '127.0.0.1', port, path: target, agent: false, rejectUnauthorized: false }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: pairsOf(res.rawHeaders), body: Buffer.concat(chunks).toString('base64') }))
      res.on('error', reject)
    })
    req.on('error', reject)
  })
}

function fetchH2 (port, target) {
  return new Promise((resolve, reject) => {
    const session = http2.connect('https://127.0.0.1:' + port, { rejectUnauthorized: false })
    session.on('error', reject)
    const req = session.request({ ':path': target })
    const chunks = []
    let head = null
    req.on('response', (headers) => { head = headers })
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('error', reject)
    req.on('end', () => {
      session.close()
      // A name with several values (set-cookie) comes as an array.
      const headers = Object.entries(head).filter(([name]) => !name.startsWith(':'))
        .flatMap(([name, value]) => [].concat(value).map((one) => [name, String(one)]))
      resolve({ status: head[':status'], headers, body: Buffer.concat(chunks).toString('base64') })
    })
  })
}

async function measureWorkload (workload, side, plan, rates) {
  const order = [side.svr, side.baseline, side.against].filter((target) => target !== null)
  const runs = new Map(order.map((target) => [target.name, []]))
  const once = async (target, seconds) => {
    const result = await loadOnce(workload, target, seconds, rates.get(target.name) || FIRST_RATE)
    rates.set(target.name, Math.max(result.rps, FIRST_RATE))
    return result
  }
  for (const target of order) {
    const warm = await warmUp((seconds) => once(target, seconds), plan.warmup)
    if (plan.warmup > 0) console.error(`bench: ${workload.name}: ${target.name} ${warm.steady ? 'steady' : 'not yet steady'} after ${warm.seconds} s of warm-up`)
  }
  for (let round = 0; round < plan.rounds; round++) {
    for (const target of round % 2 === 0 ? order : [...order].reverse()) {
      runs.get(target.name).push(await measuredRun(target, () => once(target, plan.seconds)))
      await sleep(200)
    }
  }
  const issues = []
  for (const target of order) {
    runs.get(target.name).forEach((run, i) => {
      const issue = runIssue(run, workload.status)
      if (issue !== '') issues.push(`${target.name} run ${i + 1}: ${issue}`)
    })
  }
  const median = (target) => target === null ? null : medianByCpu(runs.get(target.name))
  const inRounds = (target) => target === null ? null : runs.get(target.name)
  const row = {
    workload,
    svr: median(side.svr),
    baseline: median(side.baseline),
    against: median(side.against),
    runs: { svr: inRounds(side.svr), baseline: inRounds(side.baseline), against: inRounds(side.against) },
    issues
  }
  console.error(progressLine(row))
  return row
}

function loadOnce (workload, target, seconds, rate) {
  const url = `${workload.scheme}://127.0.0.1:${target.port}${workload.path}`
  if (workload.load === 'h2load') return h2loadRun(url, seconds, rate)
  return runLoad('wrk', { url, connections: CONNECTIONS, seconds })
}

// The run with the median CPU per request stands for the target; one
// without a request sorts last.
function medianByCpu (runs) {
  const sorted = [...runs].sort((a, b) => (a.cpuUs ?? Infinity) - (b.cpuUs ?? Infinity))
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

function progressLine (row) {
  const own = ownOf(row.runs)
  const fixed = (value) => value === null ? 'n/a' : value.toFixed(1)
  // wrk's bytes per answer, to see at a glance that the replay sends what svr sends.
  const side = (name, run) => `${name} ${fixed(run.cpuUs ?? null)} µs/req at ${run.rps.toFixed(0)} req/s` +
    (run.bytesPerSec ? `, ${Math.round(run.bytesPerSec / run.rps)} B/answer` : '')
  const parts = [side('svr', row.svr), side('baseline', row.baseline)]
  if (row.against !== null) parts.push(side('against', row.against))
  // Every run's, for the spread the medians hide.
  for (const [name, runs] of Object.entries(row.runs)) {
    if (runs !== null) parts.push(`${name} runs ${runs.map((run) => fixed(run.cpuUs ?? null)).join(' ')}`)
  }
  const against = row.against === null ? '' : `, against's own ${fixed(own.againstOwnUs)}`
  return `bench: ${row.workload.name}: ${parts.join('; ')}; svr's own ${fixed(own.ownUs)} µs/req${against}`
}

module.exports = { measureOwn, ownConfigs, recordAnswers, OWN_WORKLOADS }
