'use strict'

// node bench/h2-settings.js [--seconds N]   (default 2 s per run, 3 rounds)
//
// How the HTTP/2 SETTINGS svr sends change what a client gets, one setting
// at a time, the others at their defaults (lib/config/schema.json): the
// measurements behind those defaults (docs/config.md). h2load drives svr
// (2 workers, access log on) with the workload each setting is about:
// - initialWindowSize: uploads of 256 KiB to a script that reads them (the
//   window is what the client may send before svr reads);
// - maxConcurrentStreams: static 1 KiB with clients that would open 200
//   streams each;
// - headerTableSize: static 1 KiB with a 6 KiB cookie on every request
//   (the HPACK table the client may use to avoid resending it).

const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const selfsigned = require('selfsigned')
const { startSvr, stopAll } = require('./targets')

const UPLOAD_SCRIPT = `if (href === '/upload') {
  var size = 0
  req.on('data', function (chunk) { size += chunk.length })
  req.on('end', function () { res.writeHead(200, { 'Content-Type': 'text/plain' }); res.end(String(size)) })
  return
}
if (href === '/hello') { res.end('Hello World'); return }
`

const ROUNDS = 3
const EXPERIMENTS = [
  { key: 'initialWindowSize', values: [65535, 262144, 1048576], load: 'upload' },
  { key: 'maxConcurrentStreams', values: [100, 128, 256], load: 'many-streams' },
  { key: 'headerTableSize', values: [4096, 16384, 65536], load: 'cookie' }
]

async function main () {
  const seconds = process.argv.includes('--seconds') ? Number(process.argv[process.argv.indexOf('--seconds') + 1]) : 2
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-h2-settings-'))
  try {
    const site = await makeSite(dir)
    const rows = []
    for (const { key, values, load } of EXPERIMENTS) {
      // Every value of one setting runs at once, measured in turns (A B C,
      // A B C, …), so that the machine's drift spreads over all of them.
      const servers = []
      for (const value of values) {
        const configFile = path.join(dir, `config-${key}-${value}.json`)
        await fs.writeFile(configFile, JSON.stringify({ ...site.config, http2Settings: { [key]: value } }))
        servers.push(await startSvr({ configFile }, dir, { name: 'svr ' + key + '=' + value, scheme: 'https' }))
      }
      const runs = values.map(() => [])
      try {
        for (let round = 0; round < ROUNDS; round++) {
          for (let i = 0; i < values.length; i++) runs[i].push(await h2load(loadArgs(load, site, servers[i].port, seconds)))
        }
      } finally {
        await stopAll()
      }
      for (let i = 0; i < values.length; i++) {
        const rps = median(runs[i].map((run) => run.rps))
        rows.push({ key, value: values[i], load, rps, spread: runs[i].map((run) => run.rps.toFixed(0)).join(', ') })
        console.error(`${key}=${values[i]} ${load}: median ${rps.toFixed(0)} req/s (${rows[rows.length - 1].spread})`)
      }
    }
    console.log('| Setting | Value | Workload | req/s (median) | runs |\n|---|---|---|---|---|')
    for (const row of rows) console.log(`| ${row.key} | ${row.value} | ${row.load} | ${row.rps.toFixed(0)} | ${row.spread} |`)
  } finally {
    await stopAll()
    await fs.rm(dir, { recursive: true, force: true })
  }
}

function median (values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

async function makeSite (dir) {
  const webroot = path.join(dir, 'webroot')
  await fs.mkdir(webroot)
  await fs.writeFile(path.join(webroot, '1k.html'), 'x'.repeat(1023) + '\n')
  await fs.writeFile(path.join(dir, 'serverSideScript.js'), UPLOAD_SCRIPT)
  const upload = path.join(dir, 'upload.bin')
  await fs.writeFile(upload, Buffer.alloc(256 * 1024, 'u'))
  const pems = await selfsigned.generate([{ name: 'commonName', value: 'localhost' }], { keyType: 'ec', curve: 'P-256', algorithm: 'sha256' })
  await fs.writeFile(path.join(dir, 'cert.pem'), pems.cert)
  await fs.writeFile(path.join(dir, 'key.pem'), pems.private)
  const config = {
    port: '127.0.0.1:0',
    sport: '127.0.0.1:0',
    secure: true,
    enableHTTP2: true,
    disableNonEncryptedServer: true,
    cert: path.join(dir, 'cert.pem'),
    key: path.join(dir, 'key.pem'),
    wwwroot: webroot,
    workers: 2,
    maxRequestBodySize: 1048576
  }
  return { config, upload }
}

function loadArgs (load, site, port, seconds) {
  const origin = 'https://127.0.0.1:' + port
  const time = ['-D', String(seconds), '--warm-up-time=1']
  if (load === 'upload') return ['-c8', '-m1', '-d', site.upload, ...time, origin + '/upload']
  if (load === 'many-streams') return ['-c4', '-m200', ...time, origin + '/1k.html']
  return ['-c50', '-m10', '-H', 'cookie: session=' + 'c'.repeat(6 * 1024), ...time, origin + '/1k.html']
}

/**
 * @param {string[]} args
 * @returns {Promise<{rps: number}>}
 */
function h2load (args) {
  return new Promise((resolve, reject) => {
    execFile('h2load', args, { timeout: 120000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error('h2load failed: ' + (stderr || err.message)))
      const finished = stdout.match(/finished in [\d.]+m?s, ([\d.]+) req\/s/)
      if (!finished) return reject(new Error('cannot read h2load output:\n' + stdout))
      resolve({ rps: Number(finished[1]) })
    })
  })
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
