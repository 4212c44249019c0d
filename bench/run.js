'use strict'

// npm run bench [-- --quick] [-- --only NAME[,NAME]] [-- --profile NAME] [-- --out FILE]
// npm run bench -- --curves [--quick] [--only DIMENSION[,DIMENSION]] [--out FILE]
// npm run bench -- --against DIR   (also: another checkout of svr, e.g. a build of an earlier main)
// npm run bench -- --tls [--quick] [--only NAME[,NAME]] [--out FILE]
// npm run bench -- --own [--quick] [--only NAME[,NAME]] [--against DIR] [--rounds N] [--out FILE]
// npm run bench -- --own --count [--quick] [--only NAME[,NAME]] [--against DIR] [--out FILE]
//
// svr side by side with a bare Node cluster, nginx and Caddy in the same run,
// targets alternating (A B A B) so that drift of the machine cancels out;
// prints and writes bench/results.md with the ratio svr / baseline per
// workload. Timings never decide a test; they are reported here.
//
// Some rows are measured against a second svr with a config override (a
// variant), to show what a setting costs; only one against another variant
// has a target. --only NAME also takes the variant rows of workload NAME.
// A row may instead have the svr side of another row as its baseline
// (`baselineRow`): the same svr on another path (a cache hit against the
// static file), or another variant's svr on the same path (a store against
// none), measured in the rounds of that row when both are on the list. A
// full run profiles every workload that misses its target
// (bench/profile.js) and appends bench/bounds.md, the reading of those
// profiles, when there is one.
// BENCH_TOOL=autocannon uses autocannon even where wrk is installed.
// --against DIR adds, to every workload, a variant row for the svr of
// another checkout run with the same config in the same rounds, and a
// table of this svr over that one: the check that a change made nothing
// slower, on the same minutes of the same machine.
// --curves measures the cost curves instead (bench/curves.js) and puts
// them into the results file as its "Cost curves" section, keeping the
// rest; a regular run keeps the curves section of the file it replaces.
// --tls measures the TLS and HTTP/2 rows (bench/tls.js) into their own
// section the same way.
// --own measures svr's own CPU per request (bench/own.js): svr's CPU µs
// per request less a bare Node cluster's replaying svr's recorded answers,
// and with --against DIR the same of that checkout's svr, into the
// section "svr's own CPU per request". Its smoke run writes only to a file
// named with --out.
// --own --count counts instead of timing (bench/count.js): the main
// thread's instructions per request of svr, the replay and --against's
// svr, each in one process under valgrind, into the section "svr's own
// instructions per request".
// --rounds N measures each target in N rounds (3 unless told; 2 for the
// curves) and shows the run with the median CPU per request.

const fs = require('node:fs/promises')
const os = require('node:os')
const { execFile } = require('node:child_process')
const path = require('node:path')
const { createSite, createModProxySite } = require('./site')
const { startSvr, startBare, startBareProxy, startUpstream, startRedis, startNginx, startCaddy, stop, stopAll, rssMb, measuredRun, hasCommand, sleep } = require('./targets')
const { loadWorkload, stopLoads, warmUp } = require('./load')
const { renderResults } = require('./report')
const { profileMissed, profileWorkload, renderProfile } = require('./profile')
const { measureCurves, renderCurves, selectDimensions, spliceCurves, curvesSection, CURVE_LIMITS } = require('./curves')
const { renderCurvesSvg } = require('./plot')
const { measureTls, renderTls, TLS_WORKLOADS, TLS_HEADING } = require('./tls')
const { spliceSection, sectionOf } = require('./sections')
const { measureOwn, OWN_WORKLOADS } = require('./own')
const { renderOwn, OWN_HEADING } = require('./own-report')
const { measureCounts, countPlan } = require('./count')
const { renderCounts, COUNT_HEADING } = require('./count-report')
const { expectCacheHits } = require('./cache-hit')
const { expectStoreConnected } = require('./store-connected')
const { keysUnknownTo } = require('./against')

const BOUNDS_FILE = path.join(__dirname, 'bounds.md')
// Each target is loaded until its rate is steady before the measured rounds
// (bench/load.js warmUp), for at most this long.
const WARMUP_MAX_S = 20

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
  },
  // svr's `proxy` route and nginx's proxy_pass (keep-alive upstream
  // connections) forward to the same bare Node process.
  // No --against row: builds before the proxy have no `proxy` key.
  // Its profile is compared with the bare Node proxy's (nginx has no V8 profile).
  {
    name: 'proxy-1k',
    target: '/proxy/1k',
    connections: 50,
    baseline: 'nginx',
    goal: 0.6,
    what: 'proxy to a bare Node upstream, 1 KiB answer',
    against: false,
    profileBaseline: 'bare-proxy'
  },
  // Issue #29: a hit of the response cache at least 0.9 of the static file
  // of the same size, both answered by the same svr in the same rounds, so
  // that the machine's speed cancels out. /cached/ is the proxy route with
  // `cache` (bench/site.js); expectCacheHits fills its entry and refuses to
  // time answers that are not hits. Builds before the response cache have
  // no such route: no --against row.
  {
    name: 'cache-hit-1k',
    target: '/cached/1k',
    connections: 50,
    baseline: 'svr',
    baselineRow: 'static-1k',
    goal: 0.9,
    what: 'response cache hit of a proxied 1 KiB answer',
    against: false,
    prepare: expectCacheHits,
    note: 'baseline `svr static-1k` is the same svr answering the static 1 KiB row\'s requests, in the same rounds ' +
      '(the svr runs of that row when it is in the run); before any load the entry was filled and every answer on ' +
      'a few fresh connections checked to be a 200 with `Cache-Status: svr; hit`'
  }
]

// A rate limit on every path that never refuses: a bucket per client
// address, judged and counted on every request.
const NEVER_REACHED = [{ path: '/', rate: 1000000, burst: 1000000 }]

const REDIS_MISSING = 'redis-server is not installed (apt-get install -y redis-server)'

/**
 * Config overrides a second svr runs with, for the rows that name them.
 * `store`: the config gets a `store` on a redis-server the bench starts.
 */
const VARIANTS = {
  'no-access-log': { label: 'access log off', config: { enableLogging: false } },
  // What writing every access-log line as its response ends (the default,
  // logFlushDelay 0) costs against lines held up to 25 ms to be written
  // together, which a SIGKILL loses.
  'log-batched': { label: 'logFlushDelay 25', config: { logFlushDelay: 25 } },
  // The second bar for the proxy: at least twice what a 3.x proxy
  // mod does under svr (bench/site.js createModProxySite).
  'proxy-mod': { label: 'a 3.x proxy mod instead of `proxy`', config: { proxy: [] }, modProxy: true },
  // Issue #29: such a limit costs at most 5 %.
  'rate-limit': { label: 'a rate limit per address, never reached', config: { rateLimits: NEVER_REACHED } },
  // Issue #30: the same limit over a fleet. The primary synchronises the
  // buckets with the store every 100 ms in the background; a request never
  // waits on Redis, so the store should cost the hot path next to nothing.
  'rate-limit-store': {
    label: 'the same rate limit with a store',
    config: { rateLimits: NEVER_REACHED },
    store: true,
    note: 'a third svr with the rate limit of the row “— a rate limit per address, never reached” ' +
      `(\`${JSON.stringify({ rateLimits: NEVER_REACHED })}\`) and a \`store\` on a redis-server the bench starts on a ` +
      'loopback port (nothing kept on disk), against that svr with the same limit and no store (baseline ' +
      '`svr hello-rate-limit`, its runs in the same rounds); before any load its log was checked to say ' +
      '`store redis://127.0.0.1:PORT connected`'
  }
}

WORKLOADS.push(
  againstSvrHeaders('hello', 0.9),
  againstSvrHeaders('404', 0.85),
  variantOf('hello', 'no-access-log'),
  variantOf('404', 'no-access-log'),
  variantOf('hello', 'log-batched'),
  variantOf('404', 'log-batched'),
  variantOf('proxy-1k', 'proxy-mod'),
  variantOf('hello', 'rate-limit'),
  againstRateLimit('hello', 0.9),
  // Issue #28: the proxy at ≥ 0.9 of the bare undici proxy and ≥ 1.2 of
  // Caddy's reverse_proxy.
  againstBareProxy('bare-proxy', 'undici Pool', 0.9),
  againstBareProxy('bare-proxy-http', 'node:http keep-alive Agent'),
  againstCaddy('proxy-1k', 'Caddy `reverse_proxy`', 1.2),
  againstCaddy('static-1k', 'Caddy `file_server`'),
  againstCaddy('static-1m', 'Caddy `file_server`')
)

// The targets are judged on the default config: a variant row has none.
function variantOf (name, variant, variants = VARIANTS) {
  const base = WORKLOADS.find((w) => w.name === name)
  return { ...base, name: name + '-' + variant, base: name, variant, goal: null, what: base.what + ' — ' + variants[variant].label }
}

/**
 * The variant of --against: svr.js of another checkout, the same config.
 * @param {string} dir the other checkout
 * @returns {Promise<{label: string, config: object, svr: string, note: string}>}
 */
async function againstVariant (dir) {
  const svr = path.join(dir, 'svr.js')
  await fs.access(svr).catch(() => { throw new Error('--against ' + dir + ': no svr.js there') })
  const rev = await gitRevision(dir)
  return {
    label: 'svr at ' + rev,
    config: await keysUnknownTo(dir),
    svr,
    note: `the svr of ${dir} (${rev}) with the same config, measured in the rounds of the default row (A B C, C B A); no target`
  }
}

function gitRevision (dir) {
  return new Promise((resolve) => {
    execFile('git', ['-C', dir, 'log', '-1', '--format=%h'], (err, stdout) => resolve(err ? path.basename(dir) : stdout.trim()))
  })
}

// The same svr runs against the bare cluster that sends svr's default
// headers the way a 3.x script writes them: the rest of the gap is svr's
// own per-request work.
function againstSvrHeaders (name, goal) {
  const base = WORKLOADS.find((w) => w.name === name)
  return { ...base, name: name + '-svr-headers', base: name, baseline: 'bare-headers', goal, what: base.what + ' — against svr\'s headers' }
}

// The variant with a store against the variant with the same rate limit
// and none: what the store costs the hot path, which is judged.
function againstRateLimit (name, goal) {
  return { ...variantOf(name, 'rate-limit-store'), baseline: 'svr', baselineRow: name + '-rate-limit', goal, prepare: expectStoreConnected }
}

// svr's `proxy` against the least a Node cluster does to proxy
// (bench/bare-proxy.js): the ceiling of Node, and svr's own cost below it.
function againstBareProxy (baseline, client, goal = null) {
  const base = WORKLOADS.find((w) => w.name === 'proxy-1k')
  return { ...base, name: 'proxy-1k-' + baseline, base: 'proxy-1k', baseline, goal, what: base.what + ' — against a bare Node proxy (' + client + ')' }
}

// The same svr runs against Caddy (bench/targets.js startCaddy), a second
// server written in neither C nor JavaScript, in the rounds of the row.
function againstCaddy (name, label, goal = null) {
  const base = WORKLOADS.find((w) => w.name === name)
  return { ...base, name: name + '-caddy', base: name, baseline: 'caddy', goal, what: base.what + ' — against ' + label }
}

const LIMITS = { rssMb: 60, startMs: 1000 }

function parseArgs (argv) {
  const args = { quick: false, curves: false, tls: false, own: false, count: false, only: null, profile: null, against: null, rounds: null, out: path.join(__dirname, 'results.md'), outNamed: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--quick') args.quick = true
    else if (arg === '--curves') args.curves = true
    else if (arg === '--tls') args.tls = true
    else if (arg === '--own') args.own = true
    else if (arg === '--count') args.count = true
    else if (arg === '--only') args.only = new Set(argv[++i].split(','))
    else if (arg === '--profile') args.profile = argv[++i]
    else if (arg === '--out') {
      args.out = path.resolve(argv[++i])
      args.outNamed = true
    } else if (arg === '--against') args.against = path.resolve(argv[++i])
    else if (arg === '--rounds') args.rounds = roundsOf(argv[++i])
    else throw new Error('unknown argument ' + arg + ' (known: --quick, --curves, --tls, --own, --count, --only a,b, --profile NAME, --against DIR, --rounds N, --out FILE)')
  }
  if (args.count && !args.own) throw new Error('--count goes with --own')
  return args
}

// More rounds make the median steadier where svr's own µs are a few
// against a noisy machine's swings of one or two between runs. The bound
// catches a typo: 40 rounds of the five --own workloads take about an hour.
const MAX_ROUNDS = 40

function roundsOf (text) {
  const rounds = Number(text)
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) {
    throw new Error(`--rounds takes a whole number from 1 to ${MAX_ROUNDS}, not ${text}`)
  }
  return rounds
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  // A smoke run checks the harness in seconds; its numbers mean nothing
  // and it writes no results.md.
  const plan = args.quick ? { seconds: 1, warmup: 0, rounds: 1 } : { seconds: 5, warmup: WARMUP_MAX_S, rounds: args.rounds || 3 }
  const tool = await loadTool()
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-'))
  // nginx's workers run as an unprivileged user when started by root.
  await fs.chmod(dir, 0o755)
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      console.error('bench: ' + signal + ', stopping the servers')
      stopLoads()
      stopAll()
        .then(() => fs.rm(dir, { recursive: true, force: true }))
        .finally(() => process.exit(code))
    })
  }
  try {
    // The application behind the proxy rows, for svr and nginx alike.
    const upstream = await startUpstream(dir)
    const site = await createSite(dir, upstream.port)
    if (args.curves) return await runCurves({ args, site, dir, tool })
    if (args.tls) return await runTls({ args, site, dir })
    if (args.count) return await runCount({ args, site, dir })
    if (args.own) return await runOwn({ args, site, dir })
    if (args.profile !== null) {
      const workload = WORKLOADS.find((w) => w.name === args.profile)
      if (!workload) throw new Error('no workload ' + args.profile + '; one of ' + WORKLOADS.map((w) => w.name).join(', '))
      if (needsStore(workload) && !await hasCommand('redis-server')) throw new Error(workload.name + ': ' + REDIS_MISSING)
      const store = needsStore(workload) ? await startRedis(dir) : null
      const baselineWorkload = baselineRowOf(workload)
      const configs = await profileConfigs({ site, dir, store, workload })
      const summary = await profileWorkload({ site, dir, tool, workload, baselineWorkload, ...configs, seconds: args.quick ? 2 : 5 })
      console.log(summary)
      return
    }
    const unknown = [...(args.only || [])].filter((name) => !WORKLOADS.some((w) => w.name === name))
    if (unknown.length > 0) throw new Error('no workload ' + unknown.join(', ') + '; known: ' + WORKLOADS.map((w) => w.name).join(', '))
    const variants = args.against === null ? VARIANTS : { ...VARIANTS, against: await againstVariant(args.against) }
    const selected = WORKLOADS.filter((w) => args.only === null || args.only.has(w.name) || args.only.has(w.base))
    const { workloads, skipped } = await runnable(selected)
    if (workloads.length === 0) {
      console.error('bench: nothing left to measure')
      return
    }
    if (args.against !== null) {
      for (const w of workloads.filter((w) => !w.base && w.against !== false)) workloads.push(variantOf(w.name, 'against', variants))
    }
    // One store for every row that has one, up until the profiles are made.
    const store = workloads.some((w) => needsStore(w)) ? await startRedis(dir) : null
    const measuredAt = Date.now()
    const results = await measure({ site, dir, tool, plan, workloads, variants, store })
    console.error(`bench: measured in ${((Date.now() - measuredAt) / 1000).toFixed(0)} s`)
    // Numbers of a smoke run mean nothing; neither would their profiles.
    const profiles = args.quick ? [] : await profileMisses({ site, dir, tool, store, rows: results.rows })
    const markdown = renderResults({
      ...results,
      tool,
      plan,
      workloads,
      variants,
      skipped,
      profiles,
      bounds: await readBounds(),
      limits: LIMITS,
      machine: machineFacts()
    })
    console.log(markdown)
    if (!args.quick) {
      const previous = await readOptional(args.out)
      const curves = curvesSection(previous)
      let text = curves === '' ? markdown : spliceCurves(markdown, curves)
      // The sections other runs write stay as they were.
      for (const heading of [TLS_HEADING, OWN_HEADING, COUNT_HEADING]) {
        const section = sectionOf(previous, heading)
        if (section !== '') text = spliceSection(text, heading, section)
      }
      await fs.writeFile(args.out, text)
      console.log('wrote ' + path.relative(process.cwd(), args.out))
    }
  } finally {
    await stopAll()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

/**
 * The cost curves: measured, printed and, unless quick, put into the
 * results file.
 */
async function runCurves ({ args, site, dir, tool }) {
  const dimensions = selectDimensions(args.only === null ? null : [...args.only])
  const plan = args.quick ? { seconds: 1, warmup: 0, rounds: 1 } : { seconds: 3, warmup: WARMUP_MAX_S, rounds: args.rounds || 2 }
  const begun = Date.now()
  const curves = await measureCurves({ site, dir, tool, plan, dimensions })
  console.error(`bench: curves measured in ${((Date.now() - begun) / 1000).toFixed(0)} s`)
  // The plot beside the results file, drawn from the same numbers.
  const plot = path.join(path.dirname(args.out), path.basename(args.out, '.md') + '-curves.svg')
  const section = renderCurves(curves, { tool, plan, date: machineFacts().date, plot: path.basename(plot) })
  console.log(section)
  if (!args.quick) {
    await fs.writeFile(plot, renderCurvesSvg(curves, CURVE_LIMITS))
    await fs.writeFile(args.out, spliceCurves(await readOptional(args.out), section))
    console.log('wrote ' + path.relative(process.cwd(), args.out) + ' and ' + path.relative(process.cwd(), plot))
  }
}

/**
 * The TLS and HTTP/2 rows: measured, printed and, unless quick, put into
 * the results file.
 */
async function runTls ({ args, site, dir }) {
  const unknown = [...(args.only || [])].filter((name) => !TLS_WORKLOADS.some((w) => w.name === name))
  if (unknown.length > 0) throw new Error('no TLS workload ' + unknown.join(', ') + '; known: ' + TLS_WORKLOADS.map((w) => w.name).join(', '))
  const plan = args.quick ? { seconds: 1, warmup: 0, rounds: 1 } : { seconds: 4, warmup: WARMUP_MAX_S, rounds: args.rounds || 3 }
  const begun = Date.now()
  const { rows } = await measureTls({ site, dir, plan, only: args.only })
  console.error(`bench: TLS rows measured in ${((Date.now() - begun) / 1000).toFixed(0)} s`)
  const section = renderTls(rows, { plan, date: machineFacts().date })
  console.log(section)
  if (!args.quick) {
    await putSection(args.out, TLS_HEADING, section)
  }
}

/**
 * svr's own CPU per request: measured, printed and put into the results
 * file; a smoke run's numbers only into a file named with --out, to check
 * the writing.
 */
async function runOwn ({ args, site, dir }) {
  checkOwnWorkloads(args.only)
  // A few seconds of warm-up even in a smoke run: a cold worker's CPU per
  // request is mostly V8 compiling, for svr and the replay unequally.
  const plan = args.quick ? { seconds: 2, warmup: 3, rounds: 1 } : { seconds: 5, warmup: WARMUP_MAX_S, rounds: args.rounds || 3 }
  const against = args.against === null ? null : { dir: args.against, ...await againstVariant(args.against) }
  const begun = Date.now()
  const rows = await measureOwn({ site, dir, plan, only: args.only, against })
  console.error(`bench: own CPU per request measured in ${((Date.now() - begun) / 1000).toFixed(0)} s`)
  const section = renderOwn(rows, { ...machineFacts(), plan, against })
  console.log(section)
  if (!args.quick || args.outNamed) {
    await putSection(args.out, OWN_HEADING, section)
  }
}

async function runCount ({ args, site, dir }) {
  checkOwnWorkloads(args.only)
  const against = args.against === null ? null : { dir: args.against, ...await againstVariant(args.against) }
  const begun = Date.now()
  const rows = await measureCounts({ site, dir, quick: args.quick, only: args.only, against })
  console.error(`bench: instructions per request counted in ${((Date.now() - begun) / 1000).toFixed(0)} s`)
  const section = renderCounts(rows, { ...machineFacts(), plan: countPlan(args.quick), against })
  console.log(section)
  if (!args.quick || args.outNamed) {
    await putSection(args.out, COUNT_HEADING, section)
  }
}

// --only names for --own and --own --count.
function checkOwnWorkloads (only) {
  const unknown = [...(only || [])].filter((name) => !OWN_WORKLOADS.some((w) => w.name === name))
  if (unknown.length > 0) throw new Error('no --own workload ' + unknown.join(', ') + '; known: ' + OWN_WORKLOADS.map((w) => w.name).join(', '))
}

// A section of a separate run into the results file, the rest kept.
async function putSection (file, heading, section) {
  await fs.writeFile(file, spliceSection(await readOptional(file), heading, section))
  console.log('wrote ' + path.relative(process.cwd(), file))
}

async function readOptional (file) {
  try {
    return await fs.readFile(file, 'utf8')
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
}

async function loadTool () {
  const tool = process.env.BENCH_TOOL || (await hasCommand('wrk') ? 'wrk' : 'autocannon')
  if (tool !== 'wrk' && tool !== 'autocannon') throw new Error('BENCH_TOOL is wrk or autocannon, not ' + tool)
  return tool
}

/**
 * Every workload against svr (or its variant) and its baseline, A B A B.
 * A variant row is measured in the rounds of its default row, against the
 * same baseline runs (A B C, C B A): the run stays within its time, and
 * the default and the variant are compared on the same minutes.
 * Only the baselines and variants the workloads need are started.
 */
async function measure ({ site, dir, tool, plan, workloads, variants: known, store = null }) {
  const svr = await startSvr(site, dir)
  const startup = { startMs: svr.startMs, rss: await Promise.all(svr.workerPids.map(rssMb)) }
  const baselines = new Set(workloads.map((w) => w.baseline))
  const targets = { svr, bare: null, 'bare-headers': null, 'bare-proxy': null, 'bare-proxy-http': null, nginx: null, caddy: null }
  const variants = new Map()
  try {
    if (baselines.has('bare')) targets.bare = await startBare(dir)
    if (baselines.has('bare-headers')) targets['bare-headers'] = await startBare(dir, { svrHeaders: true })
    if (baselines.has('bare-proxy')) targets['bare-proxy'] = await startBareProxy(dir, site.upstreamPort)
    if (baselines.has('bare-proxy-http')) targets['bare-proxy-http'] = await startBareProxy(dir, site.upstreamPort, { client: 'http' })
    if (baselines.has('nginx')) targets.nginx = await startNginx(dir, site.webroot, { upstreamPort: site.upstreamPort })
    if (baselines.has('caddy')) targets.caddy = await startCaddy(dir, site.webroot, { upstreamPort: site.upstreamPort })
    for (const variant of new Set(workloads.flatMap((w) => variantsOf(w)))) {
      const configFile = await variantConfig(site, dir, variant, { variants: known, store })
      variants.set(variant, await startSvr(site, dir, { configFile, name: 'svr ' + variant, svr: known[variant].svr }))
    }
    const svrFor = (workload) => workload.variant ? variants.get(workload.variant) : svr
    const measured = new Map()
    // Each target's first warm-up, the one it began cold.
    const warmups = new Map()
    for (const group of groupVariants(workloads)) {
      const rows = await measureGroup({ tool, plan, group, svrFor, baselineFor: (w) => targets[w.baseline], warmups })
      for (const row of rows) measured.set(row.workload, row)
    }
    const nginx = baselines.has('nginx') ? targets.nginx !== null : null
    const caddy = baselines.has('caddy') ? (targets.caddy !== null && targets.caddy.version) : null
    startup.warmup = { workload: workloads[0], svr: warmups.get(svr.name) || null, baselines: coldBaselines(warmups, targets, workloads[0]) }
    return { rows: workloads.map((w) => measured.get(w)), startup, nginx, caddy }
  } finally {
    for (const target of [...Object.values(targets), ...variants.values()]) {
      if (target !== null) await stop(target.proc)
    }
  }
}

// Each workload with the rows based on it (variants, other baselines) or
// measured against it (baselineRow) that are on the list; such a row whose
// default row and baseline row are not is a group of its own.
function groupVariants (workloads) {
  const groups = new Map()
  for (const workload of workloads) {
    const home = [workload.base, workload.baselineRow].find((name) => name && workloads.some((w) => w.name === name))
    const key = home || workload.name
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key).push(workload)
  }
  return [...groups.values()]
}

// The site's config with the variant's overrides, beside it, so that the
// same relative paths (serverSideScript.js) hold; a variant with a store
// gets the bench's redis-server.
async function variantConfig (site, dir, variant, { variants = VARIANTS, store = null } = {}) {
  if (variants[variant].modProxy) return createModProxySite(site, dir, {})
  const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
  const overrides = { ...variants[variant].config }
  if (variants[variant].store) {
    if (store === null) throw new Error('variant ' + variant + ' needs the bench\'s redis-server, which was not started')
    overrides.store = { url: store.url, passwordFile: null }
  }
  const file = path.join(dir, 'config-' + variant + '.json')
  await fs.writeFile(file, JSON.stringify({ ...config, ...overrides }, null, 2))
  return file
}

// The variants whose svr a row loads: its own, and its baseline row's.
function variantsOf (workload) {
  return [workload.variant, baselineRowOf(workload)?.variant].filter(Boolean)
}

function needsStore (workload, variants = VARIANTS) {
  return variantsOf(workload).some((name) => variants[name] && variants[name].store)
}

/**
 * The rows that can be measured on this machine, and the others with why:
 * a row with a store needs redis-server, and its absence should cost the
 * run that row only.
 * @returns {Promise<{workloads: object[], skipped: {workload: object, why: string}[]}>}
 */
async function runnable (workloads) {
  if (!workloads.some((w) => needsStore(w)) || await hasCommand('redis-server')) return { workloads, skipped: [] }
  const skipped = workloads.filter((w) => needsStore(w)).map((workload) => ({ workload, why: REDIS_MISSING }))
  for (const { workload, why } of skipped) console.error(`bench: ${workload.name} not measured: ${why}`)
  return { workloads: workloads.filter((w) => !needsStore(w)), skipped }
}

// The configs of a profiled row's svr and of its baseline row's svr, as
// in the measured rounds: undefined for the site's own.
async function profileConfigs ({ site, dir, store, workload }) {
  const configOf = (w) => w !== null && w.variant ? variantConfig(site, dir, w.variant, { store }) : undefined
  return { configFile: await configOf(workload), baselineConfigFile: await configOf(baselineRowOf(workload)) }
}

// The warm-ups of the first workload's baselines, begun cold like svr's.
function coldBaselines (warmups, targets, first) {
  const baseline = targets[first.baseline]
  // A row against another row of svr has no other server.
  if (baseline === null || baseline === undefined || baseline === targets.svr || !warmups.has(baseline.name)) return []
  return [{ name: baseline.name, ...warmups.get(baseline.name) }]
}

async function measureGroup ({ tool, plan, group, svrFor, baselineFor, warmups }) {
  const sides = group.map((member) => sidesOf(member, svrFor, baselineFor))
  // Every load of the group once, in the order of the rows.
  const loads = []
  for (const side of sides) {
    for (const load of [side.svr, side.baseline]) {
      if (load.target !== null && !loads.some((l) => l.key === load.key)) loads.push(load)
    }
  }
  // Before any load, so that a row that would measure the wrong thing
  // stops the run instead of warming up.
  for (const member of group) {
    if (member.prepare) await member.prepare(svrFor(member), member)
  }
  const first = group[0]
  const runs = new Map(loads.map((load) => [load.key, []]))
  for (const load of loads) {
    const warm = await warmUp((seconds) => loadWorkload(tool, load.target, load.workload, seconds), plan.warmup)
    if (!warmups.has(load.target.name)) warmups.set(load.target.name, warm)
    if (plan.warmup > 0) console.error(`bench: ${first.name}: ${loadName(load, first)} ${warm.steady ? 'steady' : 'not yet steady'} after ${warm.seconds} s of warm-up`)
  }
  for (let round = 0; round < plan.rounds; round++) {
    // A B A B: each round runs every load once, alternating the order.
    const order = round % 2 === 0 ? loads : [...loads].reverse()
    for (const load of order) {
      runs.get(load.key).push(await measuredLoad(tool, load.target, load.workload, plan.seconds))
      await sleep(200)
    }
  }
  return group.map((member, i) => {
    const { svr, baseline } = sides[i]
    const row = { workload: member, svr: median(runs.get(svr.key)), baselineName: baselineNameOf(member), baseline: null }
    if (baseline.target !== null) row.baseline = median(runs.get(baseline.key))
    console.error(progressLine(row))
    return row
  })
}

/**
 * What a row loads on each side: a server, with the path, connections and
 * headers of a workload. Rows on the same server and path share their runs
 * (a variant's baseline, the static row under a cache-hit row), so the rows
 * of a group load a path the same way.
 */
function sidesOf (member, svrFor, baselineFor) {
  const svr = loadOf(svrFor(member), member)
  const baselineRow = baselineRowOf(member)
  if (baselineRow !== null) return { svr, baseline: loadOf(svrFor(baselineRow), baselineRow) }
  return { svr, baseline: loadOf(baselineFor(member), member) }
}

function loadOf (target, workload) {
  return { target, workload, key: target === null ? null : target.name + ' ' + workload.target }
}

// The server's name, with the path when it is not the group's.
function loadName (load, first) {
  return load.workload.target === first.target ? load.target.name : load.target.name + ' ' + load.workload.target
}

/**
 * @returns {object|null} the workload whose svr side is this row's baseline
 */
function baselineRowOf (workload) {
  return workload.baselineRow ? WORKLOADS.find((w) => w.name === workload.baselineRow) : null
}

function baselineNameOf (workload) {
  return workload.baselineRow ? 'svr ' + workload.baselineRow : workload.baseline
}

/**
 * One measured run, with the CPU time (user + system) the target's
 * processes spent in it per request: `cpuUs`, in µs. Not the load
 * generator's, nor the upstream's of the proxy rows.
 */
function measuredLoad (tool, target, workload, seconds) {
  return measuredRun(target, () => loadWorkload(tool, target, workload, seconds))
}

/**
 * Profile every workload whose ratio is below its target; a profile that
 * fails is reported in its place and the run goes on.
 * @returns {Promise<string[]>} a markdown section per missed workload
 */
async function profileMisses ({ site, dir, tool, store, rows }) {
  const sections = []
  // One profile per svr config and workload: a row based on another with
  // the same svr (the bare cluster with svr's headers) stands for it, the
  // last one missed; a variant runs another svr and has its own.
  const byBase = new Map()
  for (const row of rows.filter(missed)) byBase.set(row.workload.variant ? row.workload.name : row.workload.base || row.workload.name, row)
  for (const row of byBase.values()) {
    const begun = Date.now()
    console.error(`bench: profiling ${row.workload.name} (ratio ${ratio(row).toFixed(2)} < ${row.workload.goal})`)
    try {
      const configs = await profileConfigs({ site, dir, store, workload: row.workload })
      sections.push(renderProfile(await profileMissed({ site, dir, tool, workload: row.workload, baselineWorkload: baselineRowOf(row.workload), ...configs })))
    } catch (err) {
      console.error('bench: profiling ' + row.workload.name + ' failed: ' + err.message)
      sections.push(`### ${row.workload.what}\n\nProfiling failed: ${err.message.split('\n')[0]}\n`)
    }
    console.error(`bench: profiled ${row.workload.name} in ${((Date.now() - begun) / 1000).toFixed(0)} s`)
  }
  return sections
}

function missed (row) {
  return row.workload.goal !== null && row.baseline !== null && ratio(row) < row.workload.goal
}

function ratio (row) {
  return row.svr.rps / row.baseline.rps
}

function readBounds () {
  return readOptional(BOUNDS_FILE)
}

// The run with the median rate of requests stands for the workload.
function median (runs) {
  const sorted = [...runs].sort((a, b) => a.rps - b.rps)
  return sorted[Math.floor((sorted.length - 1) / 2)]
}

function progressLine (row) {
  const ratio = row.baseline ? (row.svr.rps / row.baseline.rps).toFixed(2) : 'n/a'
  const cpu = (run) => run && run.cpuUs !== null ? ` (${run.cpuUs.toFixed(1)} µs CPU/req)` : ''
  return `${row.workload.name}: svr ${row.svr.rps.toFixed(0)} req/s${cpu(row.svr)}, ` +
    `${row.baselineName} ${row.baseline ? row.baseline.rps.toFixed(0) : 'n/a'}${cpu(row.baseline)}, ratio ${ratio}`
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
