'use strict'

// What bounds a workload that misses its target: the workload run again
// against svr (and the bare cluster, when that is its baseline) started
// with --cpu-prof, and the CPU time of their workers per request, by
// category and by function. `--profile NAME` prints the same for svr alone.

const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr, startBare, startBareProxy, stop } = require('./targets')
const { loadWorkload, warmUp } = require('./load')
const { CATEGORIES, eachSample, costPerRequest } = require('./categories')

const TOP = Number(process.env.BENCH_PROFILE_TOP) || 8
/**
 * Load until the rate is steady first (at most `warmup` s), so that the
 * profiled seconds see code that the JIT has already compiled, as the
 * measured runs do after their warm-up.
 */
const PLAN = { warmup: 20, seconds: 4 }
const PROJECT_ROOT = path.join(__dirname, '..')

/**
 * Profile one workload against svr and, when the bare cluster is its
 * baseline, against that too; nginx cannot be profiled this way, so a
 * workload against nginx may name a Node baseline to profile instead
 * (`profileBaseline`: the bare proxy of the proxy row). A row against
 * another row of svr (`baselineWorkload`: the static file under a cache
 * hit) is compared with svr loaded as that row, with that row's config
 * (`baselineConfigFile`: the rate limit without a store under the one with).
 * @param {{configFile?: string, baselineConfigFile?: string}} opts the svr configs of a variant
 *   row and of its baseline row; the site's own when undefined
 * @returns {Promise<{workload: object, svr: object, baseline: object|null, baselineName: string}>}
 */
async function profileMissed ({ site, dir, tool, workload, baselineWorkload = null, configFile, baselineConfigFile, plan = PLAN }) {
  const svr = await profileTarget({ dir, tool, workload, plan, start: svrStarter(site, dir, configFile) })
  if (baselineWorkload !== null) {
    const baseline = await profileTarget({ dir, tool, workload: baselineWorkload, plan, start: svrStarter(site, dir, baselineConfigFile) })
    return { workload, svr, baseline, baselineName: 'svr ' + baselineWorkload.name }
  }
  const baselineName = workload.profileBaseline || workload.baseline
  const start = baselineStarter(site, dir, baselineName)
  const baseline = start === null ? null : await profileTarget({ dir, tool, workload, plan, start })
  return { workload, svr, baseline, baselineName }
}

function svrStarter (site, dir, configFile) {
  return (nodeArgs) => startSvr(site, dir, { nodeArgs, configFile })
}

// How to start a baseline with node options, null for one that is not Node.
function baselineStarter (site, dir, name) {
  if (name === 'bare' || name === 'bare-headers') return (nodeArgs) => startBare(dir, { nodeArgs, svrHeaders: name === 'bare-headers' })
  if (name === 'bare-proxy' || name === 'bare-proxy-http') {
    return (nodeArgs) => startBareProxy(dir, site.upstreamPort, { nodeArgs, client: name === 'bare-proxy' ? 'undici' : 'http' })
  }
  return null
}

/**
 * `--profile NAME`: the categories and top functions of svr (with the
 * config of the workload's variant, if it has one), and of the Node
 * baseline its profile is compared with, if it names one, or of the svr
 * of the row it is measured against (`baselineWorkload`, with its config
 * `baselineConfigFile`).
 * @returns {Promise<string>} markdown
 */
async function profileWorkload ({ site, dir, tool, workload, baselineWorkload = null, configFile, baselineConfigFile, seconds }) {
  // A quick profile (2 s) checks the harness: no warm-up.
  const plan = { warmup: seconds < PLAN.seconds ? 0 : PLAN.warmup, seconds }
  const svr = await profileTarget({ dir, tool, workload, plan, start: svrStarter(site, dir, configFile) })
  if (baselineWorkload !== null) {
    const baseline = await profileTarget({ dir, tool, workload: baselineWorkload, plan, start: svrStarter(site, dir, baselineConfigFile) })
    return renderProfile({ workload, svr, baseline, baselineName: 'svr ' + baselineWorkload.name })
  }
  const baselineName = workload.profileBaseline || null
  const start = baselineName === null ? null : baselineStarter(site, dir, baselineName)
  const baseline = start === null ? null : await profileTarget({ dir, tool, workload, plan, start })
  return renderProfile({ workload, svr, baseline, baselineName: baseline === null ? null : baselineName })
}

/**
 * Start a target with --cpu-prof, load it, stop it (profiles are written
 * when the processes exit) and read the profiles of its workers: every
 * process but the primary, which serves no requests.
 */
async function profileTarget ({ dir, tool, workload, plan, start }) {
  const profileDir = await fs.mkdtemp(path.join(dir, 'profiles-'))
  const target = await start(['--cpu-prof', '--cpu-prof-dir=' + profileDir])
  let result
  let window
  let warm
  try {
    // As in the measured rounds: a row that would profile the wrong answers stops here.
    if (workload.prepare) await workload.prepare(target, workload)
    warm = await warmUp((seconds) => loadWorkload(tool, target, workload, seconds), plan.warmup)
    const startUs = nowUs()
    result = await loadWorkload(tool, target, workload, plan.seconds)
    window = { startUs, endUs: nowUs() }
  } finally {
    await stop(target.proc)
  }
  const workers = []
  for (const name of await fs.readdir(profileDir)) {
    if (!name.endsWith('.cpuprofile') || pidOf(name) === target.pid) continue
    workers.push(JSON.parse(await fs.readFile(path.join(profileDir, name), 'utf8')))
  }
  if (workers.length === 0) throw new Error(target.name + ' wrote no worker profiles in ' + profileDir)
  const options = { root: PROJECT_ROOT, window }
  return {
    name: target.name,
    plan,
    warmSeconds: warm.seconds,
    result,
    workers: workers.length,
    cost: costPerRequest(workers, result.requests, options),
    top: topFunctions(workers, result.requests, options)
  }
}

// CPU.20261123.140519.1007.0.001.cpuprofile: the pid is the fourth field.
function pidOf (fileName) {
  const match = fileName.match(/^CPU\.\d+\.\d+\.(\d+)\./)
  return match ? Number(match[1]) : null
}

// On the clock of the profiles' timestamps (both are CLOCK_MONOTONIC).
function nowUs () {
  return Number(process.hrtime.bigint() / 1000n)
}

/**
 * The functions with the most self time over all the profiles, in µs per
 * request and as a share of the busy time.
 */
function topFunctions (profiles, requests, { window }) {
  const byFrame = new Map()
  let busyUs = 0
  for (const profile of profiles) {
    eachSample(profile, window, (node, us) => {
      const frame = node.callFrame
      if (frame.functionName === '(idle)') return
      busyUs += us
      const key = (frame.functionName || '(anonymous)') + (frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : '')
      byFrame.set(key, (byFrame.get(key) || 0) + us)
    })
  }
  return [...byFrame]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([frame, us]) => ({ frame, usPerRequest: us / Math.max(requests, 1), share: busyUs ? us / busyUs : 0 }))
}

// Paths as a reader of results.md knows them: relative to the checkout,
// from node_modules/, or the file name alone for the bench's temp site.
function shortUrl (url) {
  if (!url) return ''
  const file = url.replace(/^file:\/\//, '')
  if (!file.startsWith('/')) return file
  if (file.startsWith(PROJECT_ROOT + path.sep)) return path.relative(PROJECT_ROOT, file)
  const modules = file.lastIndexOf('/node_modules/')
  return modules === -1 ? path.basename(file) : file.slice(modules + 1)
}

/**
 * @param {{workload: object, svr: object, baseline: object|null, baselineName: string|null}} profiled
 * @returns {string} markdown
 */
function renderProfile ({ workload, svr, baseline, baselineName }) {
  const withBaseline = baselineName !== null
  const lines = [
    `### ${workload.what}`,
    '',
    `Profiled again (${svr.warmSeconds} s warm-up, then ${svr.result.requests} requests in ${svr.plan.seconds} s at ` +
      `${svr.result.rps.toFixed(0)} req/s${baseline ? `; ${baselineName} ${baseline.result.rps.toFixed(0)} req/s` : ''}): ` +
      `CPU µs per request in the ${svr.workers} workers, by the first category found from the sampled frame toward the root.`,
    ''
  ]
  const rows = CATEGORIES.map((name) => ({
    name,
    svr: svr.cost.byCategory[name],
    baseline: baseline ? baseline.cost.byCategory[name] : null
  })).sort((a, b) => b.svr - a.svr)
  rows.push({ name: '**total**', svr: svr.cost.busy, baseline: baseline ? baseline.cost.busy : null })
  if (withBaseline) {
    lines.push(`| category | svr µs/req | ${baselineName} µs/req | difference |`, '|---|---:|---:|---:|')
    for (const row of rows) {
      const difference = row.baseline === null ? '—' : signed(row.svr - row.baseline)
      lines.push(`| ${row.name} | ${us(row.svr)} | ${row.baseline === null ? '—' : us(row.baseline)} | ${difference} |`)
    }
  } else {
    lines.push('| category | svr µs/req |', '|---|---:|')
    for (const row of rows) lines.push(`| ${row.name} | ${us(row.svr)} |`)
  }
  lines.push('', `Top ${svr.top.length} functions of svr by self time:`, '', '| self µs/req | share | function |', '|---:|---:|---|')
  for (const entry of svr.top) lines.push(topRow(entry))
  if (baseline) {
    lines.push('', `Top ${baseline.top.length} functions of ${baselineName} by self time:`, '', '| self µs/req | share | function |', '|---:|---:|---|')
    for (const entry of baseline.top) lines.push(topRow(entry))
  }
  lines.push('')
  return lines.join('\n')
}

function topRow (entry) {
  return `| ${us(entry.usPerRequest)} | ${(entry.share * 100).toFixed(1)}% | \`${entry.frame}\` |`
}

function us (value) {
  return value.toFixed(1)
}

function signed (value) {
  const text = Math.abs(value).toFixed(1)
  if (Number(text) === 0) return text
  return (value > 0 ? '+' : '−') + text
}

module.exports = { profileMissed, profileWorkload, renderProfile, PLAN }
