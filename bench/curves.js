'use strict'

// npm run bench -- --curves: what one request, a start and a reload cost
// as one dimension of the site grows by 10× and 100× (bench/curve-configs.js).
// The rows of a dimension run side by side, alternating (A B C, C B A), so
// that they are compared on the same minutes of the machine.

const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr, stop, sleep } = require('./targets')
const { loadWorkload, warmUp, warmupFact } = require('./load')
const { DIMENSIONS, writeRow } = require('./curve-configs')
const { spliceSection, sectionOf } = require('./sections')

const HEADING = '## Cost curves'
const RELOAD_TIMEOUT_MS = 30000
const RELOADED = /reload applied/g

/** The limit on boot and reload of the largest row, and the flatness goal. */
const CURVE_LIMITS = { bootMs: 2000, reloadMs: 2000, flat: 0.9 }

/**
 * @param {string[]|null} only dimension names, null for all
 * @returns {object[]} the dimensions to measure
 * @throws {Error} naming an unknown dimension
 */
function selectDimensions (only) {
  if (only === null) return DIMENSIONS
  const unknown = only.filter((name) => !DIMENSIONS.some((d) => d.name === name))
  if (unknown.length > 0) throw new Error('no curve ' + unknown.join(', ') + '; known: ' + DIMENSIONS.map((d) => d.name).join(', '))
  return DIMENSIONS.filter((d) => only.includes(d.name))
}

/**
 * Measure every row of the dimensions: start to first 200, req/s and p99
 * of its request, SIGHUP to "reload applied".
 * @returns {Promise<Array<{dimension: object, rows: object[]}>>}
 */
async function measureCurves ({ site, dir, tool, plan, dimensions }) {
  await fs.mkdir(path.join(site.webroot, 'private'), { recursive: true })
  await fs.copyFile(path.join(site.webroot, '1k.html'), path.join(site.webroot, 'private', '1k.html'))
  const curves = []
  for (const dimension of dimensions) {
    curves.push({ dimension, rows: await measureDimension({ site, dir, tool, plan, dimension }) })
  }
  return curves
}

async function measureDimension ({ site, dir, tool, plan, dimension }) {
  const rows = []
  try {
    for (const n of dimension.sizes) {
      const configFile = await writeRow(dimension, n, site, dir)
      const svr = await startSvr(site, dir, { configFile, name: `svr ${dimension.name} ${n}` })
      rows.push({ n, svr, startMs: svr.startMs, runs: [], reloadMs: null })
      console.error(`bench: ${dimension.name} ${n}: started in ${svr.startMs.toFixed(0)} ms`)
    }
    const workloadOf = (row) => ({
      target: typeof dimension.target === 'function' ? dimension.target(row.n) : dimension.target,
      connections: dimension.connections,
      headers: dimension.headers
    })
    for (const row of rows) {
      await warmUp((seconds) => loadWorkload(tool, row.svr, workloadOf(row), seconds), plan.warmup)
    }
    for (let round = 0; round < plan.rounds; round++) {
      const order = round % 2 === 0 ? rows : [...rows].reverse()
      for (const row of order) {
        row.runs.push(await loadWorkload(tool, row.svr, workloadOf(row), plan.seconds))
        await sleep(200)
      }
    }
    for (const row of rows) {
      row.reloadMs = await reload(row.svr)
      row.load = median(row.runs)
      console.error(`bench: ${dimension.name} ${row.n}: ${row.load.rps.toFixed(0)} req/s, p99 ${row.load.p99Ms} ms, reload ${row.reloadMs.toFixed(0)} ms`)
    }
  } finally {
    for (const row of rows) await stop(row.svr.proc)
  }
  return rows
}

/**
 * SIGHUP, then the time until the primary logs that every worker runs the
 * new configuration.
 * @returns {Promise<number>} milliseconds
 */
async function reload (svr) {
  const before = await countReloads(svr.logFile)
  const begun = process.hrtime.bigint()
  process.kill(svr.pid, 'SIGHUP')
  const deadline = Date.now() + RELOAD_TIMEOUT_MS
  while (Date.now() < deadline) {
    if (await countReloads(svr.logFile) > before) return Number(process.hrtime.bigint() - begun) / 1e6
    await sleep(5)
  }
  throw new Error(svr.name + ': no "reload applied" within ' + RELOAD_TIMEOUT_MS + ' ms of SIGHUP')
}

async function countReloads (file) {
  return ((await fs.readFile(file, 'utf8')).match(RELOADED) || []).length
}

// The run with the median rate of requests stands for the row.
function median (runs) {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

/**
 * The curves as a markdown section: per row req/s and p99 with their ratio
 * to the smallest row of the dimension, boot and reload times.
 * @param {Array<{dimension: object, rows: object[]}>} curves
 * @param {{tool: string, plan: object, date: string, plot?: string}} facts
 *   plot: the file name of the SVG drawn from the same run, linked from the section
 * @returns {string}
 */
function renderCurves (curves, { tool, plan, date, plot }) {
  const lines = [
    '## Cost curves',
    '',
    `${date} · load by ${tool === 'wrk' ? '`wrk -t1`' : 'autocannon'} · ${warmupFact(plan)}${plan.rounds} × ${plan.seconds} s per row, ` +
      'the rows of a dimension side by side and alternating, median shown · svr with 2 workers. ' +
      `“rate” is req/s over the smallest row of the same dimension (flat: ≥ ${CURVE_LIMITS.flat}); boot is start to ` +
      'first 200, reload SIGHUP to “reload applied”.',
    '',
    ...(plot ? [`![req/s relative to the smallest row, per dimension](${plot})`, ''] : []),
    '| dimension | entries | req/s | rate | p99 | p99 ratio | boot | reload | socket errors, non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---|'
  ]
  for (const { dimension, rows } of curves) {
    const first = rows[0]
    for (const row of rows) {
      lines.push('| ' + [
        row === first ? dimension.what : '″',
        row.n.toLocaleString('en-US'),
        row.load.rps.toFixed(0),
        (row.load.rps / first.load.rps).toFixed(2),
        ms(row.load.p99Ms),
        (row.load.p99Ms / first.load.p99Ms).toFixed(2),
        ms(row.startMs),
        ms(row.reloadMs),
        row.load.errors + ', ' + row.load.non2xx
      ].join(' | ') + ' |')
    }
  }
  lines.push('')
  return lines.join('\n')
}

function ms (value) {
  return value < 10 ? value.toFixed(2) + ' ms' : value.toFixed(0) + ' ms'
}

/**
 * Put a `## Cost curves` section into a results file's text, in place of
 * the one there, or at its end.
 * @param {string|null} markdown the file's text, null when there is none
 * @param {string} section
 * @returns {string}
 */
function spliceCurves (markdown, section) {
  return spliceSection(markdown, HEADING, section)
}

/**
 * The `## Cost curves` section of a results file, '' when it has none.
 * @param {string|null} markdown
 * @returns {string}
 */
function curvesSection (markdown) {
  return sectionOf(markdown, HEADING)
}

module.exports = { measureCurves, renderCurves, selectDimensions, spliceCurves, curvesSection, CURVE_LIMITS }
