'use strict'

// What a reload costs under load: `wrk -c50` against svr (2 workers, a
// 1 KiB static file) for SECONDS, then SIGHUP and another SECONDS of the
// same load started at the signal. The reload replaces every worker; a
// fresh one runs cold (V8 has not compiled its hot code yet) until it has
// served a few thousand requests. Prints the requests of each window and
// their ratio (after / before), ROUNDS times on one server.
// node bench/reload-warmth.js [--rounds N] [--seconds S] [--config JSON]
// Needs wrk (apt-get install -y wrk).

const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { runLoad } = require('./load')

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
  let output = ''
  const waiters = []
  const onData = (chunk) => {
    output += chunk
    for (const waiter of waiters.slice()) {
      if (waiter.pattern.test(output.slice(waiter.from))) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  }
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const waitFor = (pattern, from = 0) => new Promise((resolve) => {
    waiters.push({ pattern, from, resolve })
    onData('')
  })
  return { child, waitFor, mark: () => output.length }
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
    await svr.waitFor(/listening on http:/)
    const url = 'http://127.0.0.1:' + PORT + '/1k.html'
    // Past the first start's own warm-up.
    await runLoad('wrk', { url, connections: 50, seconds })
    console.log('cpu: ' + os.cpus()[0].model + ', ' + os.cpus().length + ' cores; wrk -c50, ' + seconds + ' s before and after each SIGHUP')
    console.log('| round | requests before | requests after SIGHUP | after / before |')
    console.log('|---:|---:|---:|---:|')
    for (let round = 1; round <= rounds; round++) {
      const before = await runLoad('wrk', { url, connections: 50, seconds })
      const mark = svr.mark()
      const applied = svr.waitFor(/reload applied|reload failed/, mark)
      svr.child.kill('SIGHUP')
      const after = await runLoad('wrk', { url, connections: 50, seconds })
      await applied
      console.log('| ' + round + ' | ' + before.requests + ' | ' + after.requests + ' | ' + (after.requests / before.requests).toFixed(2) + ' |')
    }
  } finally {
    if (svr !== null) svr.child.kill('SIGTERM')
    await fs.rm(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err.message)
  process.exitCode = 1
})
