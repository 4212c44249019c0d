'use strict'

// `npm run bench -- --own --count`: svr's own work per request counted in
// instructions instead of timed. The timed yardstick (bench/own.js) moves
// with the machine's load by as much as what is left to take off; the
// number of instructions a process executes does not. Each target runs in
// one process under valgrind's callgrind: svr `--single-threaded`, the
// replay of its answers (bench/bare-replay.js) with BENCH_SINGLE=1, and
// with --against the other checkout's svr. A warm-up load lets V8
// optimise what it will, uninstrumented (callgrind then runs several times
// faster); instrumentation is switched on, a short load settles the
// simulated caches, the counters are zeroed, and the main thread's
// instructions over a counted load are read. V8's helper threads
// (compilers, concurrent marking) and the kernel's share of system calls
// are not counted.
//
// Callgrind also simulates the first-level instruction cache, in the
// machine's geometry (32 KiB, 8-way on the AMD EPYC of bench/results.md):
// a request's path through Node, V8 and svr is larger than that cache, so
// nearly every cache line of code it runs is fetched again on every
// request, and the misses a request adds cost time that its instructions
// do not show.

const { spawn, execFile } = require('node:child_process')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const path = require('node:path')
const { track, startSvr, stop, hasCommand, sleep } = require('./targets')
const { freePort } = require('../test/helpers/tools')
const { makeCertificate } = require('./tls')
const { OWN_WORKLOADS, ownConfigs, recordAnswers } = require('./own')

const BARE_REPLAY = path.join(__dirname, 'bare-replay.js')
const LISTENING = /listening on https?:\/\/127\.0\.0\.1:(\d+)/
// Node starts about fifty times slower under valgrind.
const START_TIMEOUT_MS = 240000
// 15,000 requests of warm-up were enough for hello over HTTP/1.1 and too few
// over TLS, where a run then caught V8 still optimising.
// `settle`: requests run instrumented before the counters are zeroed, so
// that the counted ones find the simulated caches as a request leaves them.
// `passes`: the warm-up runs this many times, each over new connections.
// The first connections to close change what V8 had seen of the socket
// and response objects (a field's type, a field written again), and the
// optimised code that relied on it is dropped: svr's request context,
// Node's timers and stream code went back to Maglev, whose code is larger,
// and a count made straight after one warm-up load counted that (hello:
// about 400 instruction-cache misses a request more for svr, 100 more for
// the replay). A second load lets V8 optimise them again, as a server that
// has seen connections come and go has them.
const PLANS = {
  full: { warm: 30000, passes: 2, settle: 1000, counted: 8000 },
  quick: { warm: 1500, passes: 2, settle: 100, counted: 500 }
}
// The stat cache keeps a file's stat this long. Valgrind slows a process
// about fifty times, so at the default of 1 s most requests would take the
// path that stats the file, which at full speed one in hundreds takes.
const COUNT_OVERRIDES = { fileCacheTtl: 600000 }

function countPlan (quick) {
  return quick ? PLANS.quick : PLANS.full
}

/**
 * Count svr's, the replay's and the against svr's main-thread instructions
 * and instruction-cache misses per request for each workload.
 * @param {{site: object, dir: string, quick: boolean, only: Set<string>|null, against: {svr: string, config: object}|null}} run
 * @returns {Promise<object[]>} per workload: workload, svr, baseline, against (instructions per request, or
 *   null), and misses: the same sides' instruction-cache misses per request
 */
async function measureCounts ({ site, dir, quick, only, against = null }) {
  const missing = []
  for (const tool of ['valgrind', 'callgrind_control', 'h2load']) if (!await hasCommand(tool)) missing.push(tool)
  if (missing.length > 0) throw new Error('--count needs ' + missing.join(', ') + ' (apt-get install valgrind nghttp2-client)')
  const plan = countPlan(quick)
  const workloads = OWN_WORKLOADS.filter((w) => only === null || only.has(w.name))
  const schemes = [...new Set(workloads.map((w) => w.scheme))]
  const tls = schemes.includes('https') ? await makeCertificate(dir) : null
  const configs = await ownConfigs(site, dir, tls, against)
  const rows = new Map(workloads.map((w) => [w.name, {
    workload: w, svr: null, baseline: null, against: null, misses: { svr: null, baseline: null, against: null }
  }]))
  for (const scheme of schemes) {
    const ofScheme = workloads.filter((w) => w.scheme === scheme)
    const answers = await recordedAnswers(site, dir, scheme, configs.svr[scheme], ofScheme)
    const targets = [
      { side: 'svr', args: [path.join(__dirname, '..', 'svr.js'), '--single-threaded', '--config', await countConfig(configs.svr[scheme])] },
      { side: 'baseline', args: [BARE_REPLAY, 'PORT', answers, ...(scheme === 'https' ? [tls.cert, tls.key] : [])], env: { BENCH_SINGLE: '1' } }
    ]
    if (against !== null) {
      targets.push({ side: 'against', args: [against.svr, '--single-threaded', '--config', await countConfig(configs.against[scheme], against.config)] })
    }
    for (const target of targets) {
      const counts = await countTarget(target, scheme, ofScheme, plan, dir)
      for (const [name, perRequest] of counts) {
        const row = rows.get(name)
        row[target.side] = perRequest.instructions
        row.misses[target.side] = perRequest.misses
      }
    }
  }
  return [...rows.values()]
}

// svr's answers to the workloads' paths, recorded from a normal svr, for
// the replay to send.
async function recordedAnswers (site, dir, scheme, configFile, workloads) {
  const svr = await startSvr(site, dir, { name: 'svr ' + scheme + ' (recording)', configFile, ...(scheme === 'https' ? { scheme, ready: '/1k.html' } : {}) })
  try {
    const file = path.join(dir, `count-answers-${scheme}.json`)
    await fsp.writeFile(file, JSON.stringify(await recordAnswers(workloads, svr), null, 2))
    return file
  } finally {
    await stop(svr.proc)
  }
}

// A copy of a config with the count's overrides; a key the build does not
// know (`unknown` has it) is left out.
async function countConfig (file, unknown = {}) {
  const config = { ...JSON.parse(await fsp.readFile(file, 'utf8')), ...COUNT_OVERRIDES }
  for (const key of Object.keys(unknown)) delete config[key]
  const counted = file.replace(/\.json$/, '') + '-count.json'
  await fsp.writeFile(counted, JSON.stringify(config, null, 2))
  return counted
}

/**
 * One target under callgrind: started, then for each workload warmed up,
 * zeroed and counted.
 * @returns {Promise<Map<string, {instructions: number, misses: number}>>} workload name → per request
 */
async function countTarget (target, scheme, workloads, plan, dir) {
  const port = target.args.includes('PORT') ? await freePort() : null
  const args = target.args.map((arg) => arg === 'PORT' ? String(port) : arg)
  const logFile = path.join(dir, `count-${target.side}-${scheme}.log`)
  const out = fs.openSync(logFile, 'w')
  const child = spawn('valgrind', ['--tool=callgrind', '--cache-sim=yes', '--instr-atstart=no', `--callgrind-out-file=${path.join(dir, 'callgrind.out.%p')}`,
    process.execPath, ...args], { stdio: ['ignore', out, out], env: { ...process.env, ...target.env } })
  fs.closeSync(out)
  // Tracked, so that the bench's Ctrl-C stops it too.
  const proc = track(child, `${target.side} ${scheme} under callgrind`)
  const counts = new Map()
  try {
    const listening = await waitForListening(logFile, proc.exited)
    const base = `${scheme}://127.0.0.1:${port ?? listening}`
    const pid = String(child.pid)
    for (const workload of workloads) {
      for (let pass = 0; pass < plan.passes; pass++) await h2load(workload, base, plan.warm)
      await control(['-i', 'on', pid])
      await h2load(workload, base, plan.settle)
      await control(['-z', pid])
      const done = await h2load(workload, base, plan.counted)
      const events = await readMainThread(pid)
      await control(['-i', 'off', pid])
      const perRequest = { instructions: Math.round(events.Ir / done), misses: Math.round(events.I1mr / done) }
      counts.set(workload.name, perRequest)
      console.error(`bench: count: ${workload.name}: ${target.side} ${perRequest.instructions} instructions and ` +
        `${perRequest.misses} instruction-cache misses a request (${done} requests)`)
    }
  } finally {
    await stop(proc)
  }
  return counts
}

async function waitForListening (logFile, exited) {
  let gone = false
  exited.then(() => { gone = true })
  const deadline = Date.now() + START_TIMEOUT_MS
  while (Date.now() < deadline) {
    const text = await fsp.readFile(logFile, 'utf8')
    const match = text.match(LISTENING)
    if (match) return Number(match[1])
    if (gone) throw new Error('a counted target exited before listening:\n' + text)
    await sleep(200)
  }
  throw new Error(`a counted target did not listen within ${START_TIMEOUT_MS} ms`)
}

// callgrind_control -e lists a thread's counts once callgrind has stored
// them, which it does when the thread is switched out: a main thread that
// sat in epoll from the end of the load to the request (seen once in CI)
// is missing from the list. Node's timers wake it within a fraction of a
// second, adding a few thousand instructions to the millions counted, so
// the list is asked for again after a pause, a few times.
const READ_TRIES = 5
const READ_PAUSE_MS = 300

async function readMainThread (pid) {
  let text = ''
  for (let attempt = 0; attempt < READ_TRIES; attempt++) {
    if (attempt > 0) await sleep(READ_PAUSE_MS)
    text = await control(['-e', 'Ir,I1mr', pid])
    if (/^\s*(Th 1\s+\d|Totals:\s+\d)/m.test(text)) break
  }
  return mainThreadEvents(text)
}

/**
 * The main thread's counts in `callgrind_control -e A,B PID` output, by
 * event name: the "Th 1" line of a process with several threads, else the
 * totals, under the header line that names the events.
 * @param {string} text
 * @returns {Object<string, number>} e.g. {Ir: 647260973, I1mr: 20768823}
 */
function mainThreadEvents (text) {
  const lines = text.split('\n').map((line) => line.trim())
  const header = lines.find((line) => /^Totals:(\s+[A-Za-z]\w*)+$/.test(line))
  const counts = lines.find((line) => /^Th 1\s+\d/.test(line)) || lines.find((line) => /^Totals:\s+\d/.test(line))
  if (header === undefined || counts === undefined) throw new Error('no count in callgrind_control output:\n' + text)
  const names = header.split(/\s+/).slice(1)
  const values = counts.replace(/^(Th 1|Totals:)/, '').trim().split(/\s+/)
  if (values.length !== names.length) throw new Error('no count of every event in callgrind_control output:\n' + text)
  const events = {}
  names.forEach((name, i) => { events[name] = Number(values[i].replace(/,/g, '')) })
  return events
}

// A load of `requests` requests over 10 connections (10 streams each over
// HTTP/2); resolves to the number answered, every one with the workload's
// class of status (h2load counts a 404 as failed, not as errored).
function h2load (workload, base, requests) {
  const url = base + workload.path
  const args = workload.load === 'h2load' ? ['-c10', '-m10', '-n', String(requests), url] : ['--h1', '-c10', '-n', String(requests), url]
  return new Promise((resolve, reject) => {
    execFile('h2load', args, { maxBuffer: 1 << 20 }, (err, stdout) => {
      if (err) return reject(err)
      const answered = answeredWith(stdout, workload.status)
      if (answered === 0) return reject(new Error(`h2load got no ${workload.status} answer from ${url}:\n${stdout}`))
      resolve(answered)
    })
  })
}

/**
 * Requests of an h2load run answered with the class of `status`, or 0
 * unless every request done was.
 * @param {string} stdout h2load's report
 * @param {number} status
 * @returns {number}
 */
function answeredWith (stdout, status) {
  const done = stdout.match(/^requests: .* (\d+) done,/m)
  const codes = stdout.match(/^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/m)
  if (done === null || codes === null) return 0
  const ofClass = Number(codes[Math.floor(status / 100) - 1])
  return ofClass === Number(done[1]) ? ofClass : 0
}

function control (args) {
  return new Promise((resolve, reject) => {
    execFile('callgrind_control', args, (err, stdout) => err ? reject(err) : resolve(stdout))
  })
}

module.exports = { measureCounts, countPlan, mainThreadEvents, answeredWith }
