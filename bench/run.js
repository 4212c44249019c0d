'use strict'

// npm run bench [-- --quick] [-- --only NAME[,NAME]] [-- --profile NAME]
//
// svr side by side with a bare Node cluster and nginx in the same run,
// targets alternating (A B A B) so that drift of the machine cancels out;
// prints and writes bench/results.md with the ratio svr / baseline per
// workload. Timings never decide a test; they are reported here.

const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { createSite } = require('./site')
const { startSvr, startBare, startNginx, stop, stopAll, rssMb, hasCommand, sleep } = require('./targets')
const { runLoad } = require('./load')
const { renderResults } = require('./report')
const { profileWorkload } = require('./profile')

/**
 * The workloads of the performance issue: path, connections, the baseline
 * that svr is compared with, and the ratio it should reach.
 */
const WORKLOADS = [
  { name: 'hello', target: '/hello', connections: 50, baseline: 'bare', goal: 0.85, what: 'hello world from serverSideScript.js' },
  { name: 'fibonacci', target: '/fibonacci?n=20000', connections: 5, baseline: 'bare', goal: 0.97, what: 'Fibonacci n=20000 (CPU bound)' },
  { name: 'static-1k', target: '/1k.html', connections: 50, baseline: 'nginx', goal: 0.5, what: 'static 1 KiB file' },
  { name: 'static-1m', target: '/1m.bin', connections: 10, baseline: 'nginx', goal: 0.5, what: 'static 1 MiB file' },
  { name: 'listing', target: '/list/', connections: 20, baseline: 'nginx', goal: 0.5, what: 'directory listing, 200 files' },
  { name: '404', target: '/missing', connections: 50, baseline: 'bare', goal: 0.8, what: '404' },
  {
    name: 'compressed',
    target: '/100k.txt',
    connections: 20,
    baseline: 'nginx',
    goal: null,
    what: '100 KiB text, Accept-Encoding: br, gzip',
    headers: { 'Accept-Encoding': 'br, gzip' }
  }
]

const LIMITS = { rssMb: 60, startMs: 1000 }

function parseArgs (argv) {
  const args = { quick: false, only: null, profile: null, out: path.join(__dirname, 'results.md') }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--quick') args.quick = true
    else if (arg === '--only') args.only = new Set(argv[++i].split(','))
    else if (arg === '--profile') args.profile = argv[++i]
    else if (arg === '--out') args.out = path.resolve(argv[++i])
    else throw new Error('unknown argument ' + arg + ' (known: --quick, --only a,b, --profile NAME, --out FILE)')
  }
  return args
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  // A smoke run checks the harness in seconds; its numbers mean nothing
  // and it writes no results.md.
  const plan = args.quick ? { seconds: 1, warmup: 0, rounds: 1 } : { seconds: 5, warmup: 1, rounds: 3 }
  const tool = await hasCommand('wrk') ? 'wrk' : 'autocannon'
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-'))
  // nginx's workers run as an unprivileged user when started by root.
  await fs.chmod(dir, 0o755)
  process.once('SIGINT', () => {
    stopAll().finally(() => process.exit(130))
  })
  try {
    const site = await createSite(dir)
    if (args.profile !== null) {
      const workload = WORKLOADS.find((w) => w.name === args.profile)
      if (!workload) throw new Error('no workload ' + args.profile + '; one of ' + WORKLOADS.map((w) => w.name).join(', '))
      const summary = await profileWorkload({ site, dir, tool, workload, seconds: args.quick ? 2 : 5 })
      console.log(summary)
      return
    }
    const workloads = WORKLOADS.filter((w) => args.only === null || args.only.has(w.name))
    const results = await measure({ site, dir, tool, plan, workloads })
    const markdown = renderResults({ ...results, tool, plan, workloads, limits: LIMITS, machine: machineFacts() })
    console.log(markdown)
    if (!args.quick) {
      await fs.writeFile(args.out, markdown)
      console.log('wrote ' + path.relative(process.cwd(), args.out))
    }
  } finally {
    await stopAll()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

async function measure ({ site, dir, tool, plan, workloads }) {
  const svr = await startSvr(site, dir)
  const startup = { startMs: svr.startMs, rss: await Promise.all(svr.workerPids.map(rssMb)) }
  const bare = await startBare(dir)
  const nginx = await startNginx(dir, site.webroot)
  const targets = { svr, bare, nginx }
  const rows = []
  try {
    for (const workload of workloads) {
      const baseline = targets[workload.baseline]
      const pair = baseline === null ? [svr] : [svr, baseline]
      const runs = new Map(pair.map((t) => [t.name, []]))
      for (const target of pair) {
        if (plan.warmup > 0) await load(tool, target, workload, plan.warmup)
      }
      for (let round = 0; round < plan.rounds; round++) {
        // A B A B: each round runs every target once, alternating the order.
        const order = round % 2 === 0 ? pair : [...pair].reverse()
        for (const target of order) {
          runs.get(target.name).push(await load(tool, target, workload, plan.seconds))
          await sleep(200)
        }
      }
      const row = { workload, svr: median(runs.get('svr')), baselineName: workload.baseline, baseline: null }
      if (baseline !== null) row.baseline = median(runs.get(baseline.name))
      rows.push(row)
      console.error(progressLine(row))
    }
  } finally {
    await stop(svr.proc)
    await stop(bare.proc)
    if (nginx !== null) await stop(nginx.proc)
  }
  return { rows, startup, nginx: nginx !== null }
}

function load (tool, target, workload, seconds) {
  return runLoad(tool, {
    url: 'http://127.0.0.1:' + target.port + workload.target,
    connections: workload.connections,
    seconds,
    headers: workload.headers
  })
}

// The run with the median rate of requests stands for the workload.
function median (runs) {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

function progressLine (row) {
  const ratio = row.baseline ? (row.svr.rps / row.baseline.rps).toFixed(2) : 'n/a'
  return `${row.workload.name}: svr ${row.svr.rps.toFixed(0)} req/s, ${row.baselineName} ${row.baseline ? row.baseline.rps.toFixed(0) : 'n/a'}, ratio ${ratio}`
}

function machineFacts () {
  const cpus = os.cpus()
  return {
    cpu: cpus.length ? cpus[0].model : 'unknown',
    cores: os.availableParallelism(),
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    date: new Date().toISOString()
  }
}

main().catch((err) => {
  console.error('bench: ' + (err.stack || err.message))
  process.exitCode = 1
})
