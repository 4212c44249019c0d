'use strict'

// The "svr's own CPU per request" section of bench/results.md, from the
// rows bench/own.js measures: the arithmetic and the markdown, no I/O.

const { warmupFact } = require('./load')

const HEADING = '## svr\'s own CPU per request'

/**
 * svr's own CPU per request: what svr's processes spent per request above
 * what the bare replay of the same answers spent, both measured in the
 * same rounds; the same for the svr of --against, over the same baseline.
 * @param {{svr: {cpuUs: number|null}, baseline: {cpuUs: number|null}, against?: {cpuUs: number|null}|null}} row
 * @returns {{svrUs: number|null, baselineUs: number|null, ownUs: number|null, againstOwnUs: number|null, ratio: number|null}}
 *   ratio: ownUs / againstOwnUs, null unless both are known and the against's is above 0
 */
function ownOf ({ svr, baseline, against = null }) {
  const svrUs = cpuOf(svr)
  const baselineUs = cpuOf(baseline)
  const minus = (us) => us === null || baselineUs === null ? null : us - baselineUs
  const ownUs = minus(svrUs)
  const againstOwnUs = against === null ? null : minus(cpuOf(against))
  const ratio = ownUs !== null && againstOwnUs !== null && againstOwnUs > 0 ? ownUs / againstOwnUs : null
  return { svrUs, baselineUs, ownUs, againstOwnUs, ratio }
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
 * @param {object[]} rows from bench/own.js measureOwn: workload, svr, baseline, against (null
 *   without --against), issues (strings)
 * @param {{date: string, cpu: string, cores: number, node: string, plan: {seconds: number, warmup: number, rounds: number},
 *   against: {label: string, dir: string}|null}} facts
 * @returns {string} the section, starting with its heading
 */
function renderOwn (rows, { date, cpu, cores, node, plan, against }) {
  const more = against === null ? [] : ['against\'s own µs/req', 'own / against\'s own']
  const lines = [
    HEADING,
    '',
    `${date} · ${cpu} · ${cores} cores · Node ${node} · ${warmupFact(plan)}${plan.rounds} × ${plan.seconds} s per target, ` +
      'targets alternating (A B C, C B A), of each the run with the median CPU per request shown',
    '',
    '| ' + ['workload', 'svr µs/req', 'baseline µs/req', 'svr\'s own µs/req', ...more, 'svr req/s', 'baseline req/s'].join(' | ') + ' |',
    '|---|' + '---:|'.repeat(5 + more.length)
  ]
  for (const row of rows) {
    const own = ownOf(row)
    const cells = [row.workload.what, us(own.svrUs), us(own.baselineUs), us(own.ownUs)]
    if (against !== null) cells.push(us(own.againstOwnUs), own.ratio === null ? 'n/a' : own.ratio.toFixed(2))
    cells.push(row.svr.rps.toFixed(0), row.baseline.rps.toFixed(0))
    lines.push('| ' + cells.join(' | ') + ' |')
  }
  lines.push(
    '',
    'µs/req: CPU time (user + system) of the target\'s whole process tree (primary and workers, from /proc) over ' +
      'a run, per request completed; not the load generator\'s. Baseline: bench/bare-replay.js, a bare Node ' +
      'cluster with 2 workers replaying svr\'s answer recorded before the load (status, headers and body, with a ' +
      'fresh X-Request-Id in place of svr\'s; `writeHead` then `end` over HTTP/1.1, `stream.respond` then ' +
      '`stream.end` over HTTP/2): the least Node does for the same bytes on the wire. svr\'s own = svr − baseline, ' +
      'on the same machine in the same minutes: the CPU svr\'s code spends per request above Node\'s, which holds ' +
      'across processors where req/s ratios against nginx do not. svr with 2 workers and the default pipeline ' +
      '(access log on): the site of bench/site.js over HTTP (its serverSideScript.js runs on every request), and ' +
      'with `secure`, `enableHTTP2` and `disableNonEncryptedServer` and no script over TLS, where wrk speaks ' +
      'HTTP/1.1 and h2load HTTP/2 to the same svr.',
    ''
  )
  if (against !== null) {
    lines.push(`against: ${against.label} (${against.dir}), the same configs, measured in the same rounds; its own is ` +
      'over the same baseline, so own / against\'s own of 0.5 is svr\'s own µs halved.', '')
  }
  const issues = rows.filter((row) => row.issues.length > 0)
  if (issues.length > 0) {
    lines.push('Runs with errors or unexpected statuses: ' + issues.map((row) => `${row.workload.name} (${row.issues.join('; ')})`).join(', ') + '.', '')
  } else {
    lines.push('Every run completed without errors, with no answer of 4xx or 5xx except on the 404 workload, where every answer was one.', '')
  }
  return lines.join('\n')
}

function us (value) {
  return value === null ? 'n/a' : value.toFixed(1)
}

module.exports = { ownOf, runIssue, renderOwn, OWN_HEADING: HEADING }
