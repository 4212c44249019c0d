'use strict'

// The "svr's own CPU per request" section of bench/results.md, from the
// rows bench/own.js measures: the arithmetic and the markdown, no I/O.

const { warmupFact } = require('./load')

const HEADING = '## svr\'s own CPU per request'

// Draws of the bootstrap interval of the ratio, and the share of them
// left out on each side: a 90 % interval.
const DRAWS = 2000
const TAIL = 0.05
// The draws' seed: the same rounds give the same interval in every run of
// the report and of its test.
const SEED = 0x5eed

/**
 * svr's own CPU per request, paired by round: in each round, what svr's
 * processes spent per request above what the bare replay of the same
 * answers spent in that round, and of those differences the median; the
 * same for the svr of --against, over the same baseline. Pairing takes out
 * what the machine's load does to a whole round (on this bench's 2-core
 * virtual machine a target's runs spread by a third between rounds, more
 * than svr's own µs), which a median per target keeps.
 * @param {{svr: object[], baseline: object[], against?: object[]|null}} runs each target's runs ({cpuUs}) in round order
 * @returns {{ownUs: number|null, againstOwnUs: number|null, ratio: number|null, rounds: number}}
 *   ratio: ownUs / againstOwnUs, null unless both are known and the against's is above 0; rounds: those with both svr's and the baseline's CPU
 */
function ownOf ({ svr, baseline, against = null }) {
  const own = differences(svr, baseline)
  const againstOwn = against === null ? null : differences(against, baseline)
  return ratioOf(own, againstOwn)
}

/**
 * The 90 % bootstrap interval of ownOf's ratio: the rounds drawn with
 * replacement, the ratio of each draw, and the 5th and 95th percentiles of
 * those. A draw whose against's own is not above 0 counts as an infinite
 * ratio. So an interval below 0.5 says that svr's own µs are halved with
 * more than the run's noise to spare, and one that holds 0.5 that the run
 * cannot tell.
 * @param {{svr: object[], baseline: object[], against: object[]}} runs as for ownOf, against required
 * @returns {{low: number, high: number}|null} null with fewer than 3 rounds having all three CPU times
 */
function ratioInterval ({ svr, baseline, against }) {
  const rounds = []
  for (let i = 0; i < svr.length; i++) {
    const own = difference(svr[i], baseline[i])
    const againstOwn = difference(against[i], baseline[i])
    if (own !== null && againstOwn !== null) rounds.push([own, againstOwn])
  }
  if (rounds.length < 3) return null
  const random = seededRandom(SEED)
  const ratios = []
  for (let draw = 0; draw < DRAWS; draw++) {
    const picked = Array.from(rounds, () => rounds[Math.floor(random() * rounds.length)])
    const { ratio } = ratioOf(picked.map((pair) => pair[0]), picked.map((pair) => pair[1]))
    ratios.push(ratio === null ? Infinity : ratio)
  }
  ratios.sort((a, b) => a - b)
  return { low: ratios[Math.floor(TAIL * DRAWS)], high: ratios[Math.ceil((1 - TAIL) * DRAWS) - 1] }
}

function ratioOf (own, againstOwn) {
  const ownUs = median(own)
  const againstOwnUs = againstOwn === null ? null : median(againstOwn)
  const ratio = ownUs !== null && againstOwnUs !== null && againstOwnUs > 0 ? ownUs / againstOwnUs : null
  return { ownUs, againstOwnUs, ratio, rounds: own.length }
}

// Per round, a's CPU per request less b's, for the rounds where both are known.
function differences (a, b) {
  const out = []
  for (let i = 0; i < a.length; i++) {
    const d = difference(a[i], b[i])
    if (d !== null) out.push(d)
  }
  return out
}

function difference (a, b) {
  const x = cpuOf(a)
  const y = cpuOf(b)
  return x === null || y === null ? null : x - y
}

function median (values) {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

// mulberry32: a small generator that is good enough to resample a handful
// of rounds and, unlike Math.random, can be seeded.
function seededRandom (seed) {
  let state = seed >>> 0
  return function next () {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function cpuOf (run) {
  return run === null || run === undefined || run.cpuUs === null || run.cpuUs === undefined ? null : run.cpuUs
}

/**
 * What was wrong with one run: errors, or answers of another class than
 * the workload's status (wrk and h2load count those of 4xx and 5xx as
 * non2xx, so a 404 workload has them all).
 * @param {{requests: number, errors: number, non2xx: number}} run
 * @param {number} status 200 or 404, the workload's
 * @returns {string} '' when nothing was
 */
function runIssue (run, status) {
  const problems = []
  if (run.requests === 0) problems.push('no request completed')
  if (run.errors > 0) problems.push(`${run.errors} errors`)
  if (status < 400 && run.non2xx > 0) problems.push(`${run.non2xx} answers of 4xx or 5xx`)
  if (status >= 400 && run.non2xx < run.requests) problems.push(`${run.requests - run.non2xx} answers not of 4xx or 5xx`)
  return problems.join(', ')
}

/**
 * @param {object[]} rows from bench/own.js measureOwn: workload; svr, baseline, against (null
 *   without --against): each the target's run with the median CPU per request; runs: each
 *   target's runs in round order ({svr, baseline, against}); issues (strings)
 * @param {{date: string, cpu: string, cores: number, node: string, plan: {seconds: number, warmup: number, rounds: number},
 *   against: {label: string, dir: string}|null}} facts
 * @returns {string} the section, starting with its heading
 */
function renderOwn (rows, { date, cpu, cores, node, plan, against }) {
  const more = against === null ? [] : ['against\'s own µs/req', 'own / against\'s own (90 % interval)']
  const lines = [
    HEADING,
    '',
    `${date} · ${cpu} · ${cores} cores · Node ${node} · ${warmupFact(plan)}${plan.rounds} × ${plan.seconds} s per target, ` +
      'targets alternating (A B C, C B A); svr and baseline µs/req: of each target the run with the median CPU per request; ' +
      'own: the median over the rounds of each round\'s difference',
    '',
    '| ' + ['workload', 'svr µs/req', 'baseline µs/req', 'svr\'s own µs/req', ...more, 'svr req/s', 'baseline req/s'].join(' | ') + ' |',
    '|---|' + '---:|'.repeat(5 + more.length)
  ]
  for (const row of rows) {
    const own = ownOf(row.runs)
    const cells = [row.workload.what, us(cpuOf(row.svr)), us(cpuOf(row.baseline)), us(own.ownUs)]
    if (against !== null) cells.push(us(own.againstOwnUs), ratioCell(own.ratio, row.runs.against === null ? null : ratioInterval(row.runs)))
    cells.push(row.svr.rps.toFixed(0), row.baseline.rps.toFixed(0))
    lines.push('| ' + cells.join(' | ') + ' |')
  }
  lines.push(
    '',
    'µs/req: CPU time (user + system) of the target\'s whole process tree (primary and workers, from /proc) over ' +
      'a run, per request completed; not the load generator\'s. Baseline: bench/bare-replay.js, a bare Node ' +
      'cluster with 2 workers replaying svr\'s answer recorded before the load (status, headers and body, with a ' +
      'fresh X-Request-Id in place of svr\'s; `writeHead` then `end` over HTTP/1.1, `stream.respond` then ' +
      '`stream.end` over HTTP/2): the least Node does for the same bytes on the wire. svr\'s own = svr − baseline ' +
      'in the same round, on the same machine in the same minute: the CPU svr\'s code spends per request above Node\'s, which holds ' +
      'across processors where req/s ratios against nginx do not. svr with 2 workers and the default pipeline ' +
      '(access log on): the site of bench/site.js over HTTP (its serverSideScript.js runs on every request), and ' +
      'with `secure`, `enableHTTP2` and `disableNonEncryptedServer` and no script over TLS, where wrk speaks ' +
      'HTTP/1.1 and h2load HTTP/2 to the same svr.',
    ''
  )
  if (against !== null) {
    lines.push(`against: ${against.label} (${against.dir}), the same configs, measured in the same rounds; its own is ` +
      'over the same baseline, so own / against\'s own of 0.5 is svr\'s own µs halved. The interval: the rounds resampled ' +
      `with replacement ${DRAWS} times (a bootstrap), the 5th and 95th percentiles of the ratio; an interval holding 0.5 ` +
      'means that this run cannot tell whether svr\'s own µs are halved.', '')
  }
  const issues = rows.filter((row) => row.issues.length > 0)
  if (issues.length > 0) {
    lines.push('Runs with errors or unexpected statuses: ' + issues.map((row) => `${row.workload.name} (${row.issues.join('; ')})`).join(', ') + '.', '')
  } else {
    lines.push('Every run completed without errors, with no answer of 4xx or 5xx except on the 404 workload, where every answer was one.', '')
  }
  return lines.join('\n')
}

function ratioCell (ratio, interval) {
  if (ratio === null) return 'n/a'
  if (interval === null) return ratio.toFixed(2)
  return `${ratio.toFixed(2)} (${interval.low.toFixed(2)}–${interval.high === Infinity ? '∞' : interval.high.toFixed(2)})`
}

function us (value) {
  return value === null ? 'n/a' : value.toFixed(1)
}

module.exports = { ownOf, ratioInterval, runIssue, renderOwn, OWN_HEADING: HEADING }
