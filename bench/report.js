'use strict'

// bench/results.md: the table of one run, ratios against the targets of
// the performance issue, the machine it ran on, the profiles of the
// workloads that missed their targets and the reading of them.

const { warmupFact } = require('./load')

/**
 * @param {object} run rows, startup, tool, plan, limits, machine;
 *   nginx: true (ran), false (not installed or did not start), null (not needed); caddy: its
 *   version (ran), false or null as nginx;
 *   variants: name → {label, config, note?}; skipped: rows not measured, {workload, why};
 *   profiles: markdown sections; bounds: markdown or null
 * @returns {string} markdown
 */
function renderResults ({ rows, startup, tool, plan, limits, machine, nginx, caddy = null, variants = {}, skipped = [], profiles = [], bounds = null }) {
  const lines = [
    '# Benchmark results',
    '',
    `${machine.date} · ${machine.cpu} · ${machine.cores} cores · ${machine.memoryGiB} GiB · Node ${machine.node} · ` +
      `load by ${tool === 'wrk' ? '`wrk -t1`' : 'autocannon'} · ${warmupFact(plan)}${plan.rounds} × ${plan.seconds} s per target, ` +
      'targets alternating, median shown · svr with 2 workers and the default pipeline (access log on), ' +
      'the bare cluster with 2 workers' + nginxFact(nginx) + caddyFact(caddy) + '. `bare-headers`: the bare cluster answering with svr\'s ' +
      'default headers (`Server`, a fresh `X-Request-Id`, `Date`) written as a 3.x script writes them (`writeHead`, ' +
      'then `end`, so chunked), measured in the rounds of the same svr runs. CPU µs/req: user + system time of the ' +
      'target\'s processes (primary or master and workers, from /proc) over the run shown, per request; neither the ' +
      'load generator\'s nor the proxy rows\' upstream\'s.',
    '',
    '| workload | c | svr req/s | svr p99 | baseline | baseline req/s | baseline p99 | ratio | target | met | svr CPU µs/req | baseline CPU µs/req |',
    '|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---:|'
  ]
  for (const row of rows) lines.push(renderRow(row))
  lines.push('')
  const used = [...new Set(rows.map((row) => row.workload.variant).filter(Boolean))]
  for (const name of used) {
    const note = variants[name].note || `a second svr with \`${JSON.stringify(variants[name].config)}\` ` +
      'in its config, measured in the rounds of the default row (A B C, C B A) against the same baseline runs; no target'
    lines.push(`Rows ending in “— ${variants[name].label}”: ${note}.`, '')
  }
  for (const row of rows.filter((r) => r.workload.note)) lines.push(`Row “${row.workload.what}”: ${row.workload.note}.`, '')
  for (const { workload, why } of skipped) lines.push(`Not measured: “${workload.what}” (\`${workload.name}\`): ${why}.`, '')
  if (used.includes('against')) lines.push(...renderAgainst(rows, variants.against), '')
  const errors = rows.filter((row) => row.svr.errors > 0 || (row.svr.non2xx > 0 && (row.workload.base || row.workload.name) !== '404'))
  if (errors.length > 0) {
    lines.push('Errors or unexpected non-2xx answers from svr: ' +
      errors.map((row) => `${row.workload.name} (${row.svr.errors} socket errors, ${row.svr.non2xx} non-2xx)`).join(', ') + '.', '')
  } else {
    lines.push('svr answered every request without socket errors, and with 2xx except on the 404 workload.', '')
  }
  const maxRss = Math.max(...startup.rss)
  lines.push(
    '| startup | value | target | met |',
    '|---|---:|---:|---|',
    `| start to first 200 | ${startup.startMs.toFixed(0)} ms | ≤ ${limits.startMs} ms | ${mark(startup.startMs <= limits.startMs)} |`,
    `| idle RSS per worker | ${startup.rss.map((mb) => mb.toFixed(1)).join(', ')} MB | ≤ ${limits.rssMb} MB | ${mark(maxRss <= limits.rssMb)} |`,
    ...renderWarmups(startup.warmup, plan),
    ''
  )
  if (profiles.length > 0) {
    lines.push('## Profiles of the missed targets', '', ...profiles)
  }
  if (bounds !== null && bounds.trim() !== '') lines.push(bounds.trim(), '')
  return lines.join('\n')
}

// What a cold start cost: how long the first workload took to reach a
// steady rate on svr and on its baseline, both begun cold. No target.
function renderWarmups (warmup, plan) {
  if (warmup === undefined || warmup.svr === null || plan.warmup === 0) return []
  const cell = (warm) => `${warm.seconds} s${warm.steady ? '' : ' (not steady)'}: ${warm.rates.map((rps) => Math.round(rps)).join(', ')} req/s`
  const lines = [`| warm-up of a fresh svr to a steady rate (${warmup.workload.name}) | ${cell(warmup.svr)} | — | — |`]
  for (const baseline of warmup.baselines) lines.push(`| warm-up of ${baseline.name} (${warmup.workload.name}) | ${cell(baseline)} | — | — |`)
  return lines
}

// This svr over the one of --against, workload by workload.
function renderAgainst (rows, against) {
  const lines = [
    `| workload | svr req/s | ${against.label} req/s | this svr / ${against.label} |`,
    '|---|---:|---:|---:|'
  ]
  for (const row of rows.filter((r) => r.workload.variant === 'against')) {
    const own = rows.find((r) => r.workload.name === row.workload.base)
    if (own === undefined) continue
    lines.push(`| ${own.workload.what} | ${own.svr.rps.toFixed(0)} | ${row.svr.rps.toFixed(0)} | ${(own.svr.rps / row.svr.rps).toFixed(2)} |`)
  }
  return lines
}

function nginxFact (nginx) {
  if (nginx === null) return ''
  return nginx ? ', nginx with 2 workers' : ', nginx not installed or did not start'
}

// Caddy's Go runtime runs on every core (GOMAXPROCS unset), as nginx runs
// one worker per core of the bench machine.
function caddyFact (caddy) {
  if (caddy === null) return ''
  return caddy
    ? `, Caddy ${caddy} (` + '`admin off`, `auto_https off`, GOMAXPROCS unset, so all cores; access log to a file as nginx\'s; ' +
      'up to 64 idle keep-alive connections to the upstream as nginx\'s `keepalive 64`)'
    : ', Caddy not installed (`apt-get install caddy`) or did not start'
}

function renderRow ({ workload, svr, baselineName, baseline }) {
  const ratio = baseline ? svr.rps / baseline.rps : null
  const cells = [
    workload.what,
    workload.connections,
    svr.rps.toFixed(0),
    ms(svr.p99Ms),
    baselineName,
    baseline ? baseline.rps.toFixed(0) : 'n/a',
    baseline ? ms(baseline.p99Ms) : 'n/a',
    ratio === null ? 'n/a' : ratio.toFixed(2),
    workload.goal === null ? '—' : '≥ ' + workload.goal,
    workload.goal === null || ratio === null ? '—' : mark(ratio >= workload.goal),
    cpuCell(svr),
    baseline ? cpuCell(baseline) : 'n/a'
  ]
  return '| ' + cells.join(' | ') + ' |'
}

function cpuCell (run) {
  return run.cpuUs === null || run.cpuUs === undefined ? 'n/a' : run.cpuUs.toFixed(1)
}

function ms (value) {
  return value < 10 ? value.toFixed(2) + ' ms' : value.toFixed(0) + ' ms'
}

function mark (ok) {
  return ok ? 'yes' : '**no**'
}

module.exports = { renderResults }
