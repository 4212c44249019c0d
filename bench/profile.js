'use strict'

// --profile NAME: run one workload against svr started with --cpu-prof and
// list the functions with the most self time in its workers, to see what
// bounds a workload that misses its target.

const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr, stop } = require('./targets')
const { runLoad } = require('./load')

const TOP = Number(process.env.BENCH_PROFILE_TOP) || 10

async function profileWorkload ({ site, dir, tool, workload, seconds }) {
  const profiles = path.join(dir, 'profiles')
  await fs.mkdir(profiles)
  const svr = await startSvr(site, dir, { nodeArgs: ['--cpu-prof', '--cpu-prof-dir=' + profiles] })
  let result
  try {
    result = await runLoad(tool, {
      url: 'http://127.0.0.1:' + svr.port + workload.target,
      connections: workload.connections,
      seconds,
      headers: workload.headers
    })
  } finally {
    // Profiles are written when the processes exit.
    await stop(svr.proc)
  }
  const files = (await fs.readdir(profiles)).filter((name) => name.endsWith('.cpuprofile'))
  const summaries = []
  for (const name of files) {
    const profile = JSON.parse(await fs.readFile(path.join(profiles, name), 'utf8'))
    summaries.push(summarize(profile))
  }
  // Busiest first: the workers, then the primary, which serves no requests.
  summaries.sort((a, b) => b.busyMs - a.busyMs)
  return render(workload, result, summaries)
}

/**
 * Self time per function, from a V8 .cpuprofile (nodes with hitCount, or
 * samples with timeDeltas).
 * @param {{nodes: object[], samples: number[], timeDeltas: number[]}} profile
 */
function summarize (profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map()
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    selfUs.set(id, (selfUs.get(id) || 0) + (profile.timeDeltas[i] || 0))
  }
  const byFrame = new Map()
  let totalUs = 0
  for (const [id, us] of selfUs) {
    const frame = byId.get(id).callFrame
    const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}${frame.url ? ':' + (frame.lineNumber + 1) : ''}`
    byFrame.set(key, (byFrame.get(key) || 0) + us)
    totalUs += us
  }
  const top = [...byFrame].sort((a, b) => b[1] - a[1]).slice(0, TOP)
  const idleUs = byFrame.get('(idle) ') || 0
  return { totalMs: totalUs / 1000, busyMs: (totalUs - idleUs) / 1000, top: top.map(([frame, us]) => ({ frame, ms: us / 1000, share: us / totalUs })) }
}

function shortUrl (url) {
  if (!url) return ''
  const root = path.join(__dirname, '..') + path.sep
  return url.replace('file://', '').replace(root, '')
}

function render (workload, result, summaries) {
  const lines = [`## Profile: ${workload.what}`, '', `${result.rps.toFixed(0)} req/s while profiling.`, '']
  summaries.forEach((summary, i) => {
    lines.push(`Process ${i + 1}: top ${TOP} functions by self time of ${summary.totalMs.toFixed(0)} ms sampled ` +
      `(${summary.busyMs.toFixed(0)} ms busy).`, '',
      '| self ms | share | function |', '|---:|---:|---|')
    for (const entry of summary.top) lines.push(`| ${entry.ms.toFixed(0)} | ${(entry.share * 100).toFixed(1)}% | \`${entry.frame}\` |`)
    lines.push('')
  })
  return lines.join('\n')
}

module.exports = { profileWorkload, summarize }
