'use strict'

// What a reload costs under load: `wrk -c50` against svr (2 workers, a
// 1 KiB static file) for SECONDS, then SIGHUP and another SECONDS of the
// same load started at the signal. The reload replaces every worker; a
// fresh one runs cold (V8 has not compiled its hot code yet) until it has
// served a few thousand requests. Prints the requests of each window and
// their ratio (after / before), ROUNDS times on one server; each round also
// measures two windows without a SIGHUP, whose ratio is the noise of the
// yardstick itself.
// node bench/reload-warmth.js [--rounds N] [--seconds S] [--config JSON]
// Needs wrk (apt-get install -y wrk).

const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { runLoad } = require('./load')
const { ServerOutput } = require('./server-output')

const ROOT = path.join(__dirname, '..')
const PORT = 18640

function option (name, fallback) {
  const at = process.argv.indexOf(name)
  return at === -1 ? fallback : Number(process.argv[at + 1])
}

// --config '{"healthReadyDelay": 3000}': keys over the bench's own.
function extraConfig () {
  const at = process.argv.indexOf('--config')
  return at === -1 ? {} : JSON.parse(process.argv[at + 1])
}

function startSvr (configFile, cwd) {
  const child = spawn(process.execPath, [path.join(ROOT, 'svr.js'), '--config', configFile], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  return { child, output: new ServerOutput(child) }
}

// Two windows of load back to back; with `reload`, SIGHUP as the second
// begins, and the pair is over once svr says how the reload ended.
async function windowPair (svr, url, seconds, reload) {
  const before = await runLoad('wrk', { url, connections: 50, seconds })
  let applied = null
  if (reload) {
    applied = svr.output.waitFor(/reload applied|reload failed/, svr.output.mark())
    svr.child.kill('SIGHUP')
  }
  const after = await runLoad('wrk', { url, connections: 50, seconds })
  if (applied !== null && (await applied)[0] === 'reload failed') throw new Error('the reload failed:\n' + svr.output.text())
  return { before: before.requests, after: after.requests }
}

function describe (ratios) {
  const mean = ratios.reduce((sum, r) => sum + r, 0) / ratios.length
  return 'mean ' + mean.toFixed(2) + ', lowest ' + Math.min(...ratios).toFixed(2) + ', highest ' + Math.max(...ratios).toFixed(2)
}

async function main () {
  const rounds = option('--rounds', 3)
  const seconds = option('--seconds', 10)
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-reload-'))
  let svr = null
  try {
    await fs.mkdir(path.join(dir, 'www'))
    await fs.writeFile(path.join(dir, 'www', '1k.html'), 'x'.repeat(1024))
    const configFile = path.join(dir, 'config.json')
    await fs.writeFile(configFile, JSON.stringify({ port: '127.0.0.1:' + PORT, wwwroot: path.join(dir, 'www'), workers: 2, ...extraConfig() }))
    svr = startSvr(configFile, dir)
    await svr.output.waitFor(/listening on http:/)
    const url = 'http://127.0.0.1:' + PORT + '/1k.html'
    // Past the first start's own warm-up.
    await runLoad('wrk', { url, connections: 50, seconds })
    console.log('cpu: ' + os.cpus()[0].model + ', ' + os.cpus().length + ' cores; node ' + process.version + '; wrk -c50, ' +
      seconds + ' s before and after each SIGHUP, and two windows without one (control)')
    console.log('| round | kind | requests before | requests after | after / before |')
    console.log('|---:|---|---:|---:|---:|')
    const ratios = { reload: [], control: [] }
    for (let round = 1; round <= rounds; round++) {
      // Alternate which pair goes first, so that neither always follows the other.
      const kinds = round % 2 === 1 ? ['reload', 'control'] : ['control', 'reload']
      for (const kind of kinds) {
        const { before, after } = await windowPair(svr, url, seconds, kind === 'reload')
        ratios[kind].push(after / before)
        console.log('| ' + round + ' | ' + kind + ' | ' + before + ' | ' + after + ' | ' + (after / before).toFixed(2) + ' |')
      }
    }
    console.log('')
    for (const kind of ['reload', 'control']) console.log(kind + ': ' + describe(ratios[kind]))
  } finally {
    if (svr !== null) svr.child.kill('SIGTERM')
    await fs.rm(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err.message)
  process.exitCode = 1
})
