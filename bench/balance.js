'use strict'

// node bench/balance.js [RUNS]: how evenly keep-alive connections spread
// over svr's workers. wrk -c5 against the CPU-bound Fibonacci path, and the
// ratio min/max of the workers' CPU time per 2 s run (1.00: even).
const path = require('node:path')
const fs = require('node:fs/promises')
const os = require('node:os')
const { execFileSync } = require('node:child_process')

const { createSite } = require('./site')
const { startSvr, stopAll } = require('./targets')

function cpuTicks (pid) {
  const f = require('node:fs').readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return Number(f[11]) + Number(f[12])
}
async function main () {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'P-bal-'))
  try {
    const site = await createSite(dir)
    const svr = await startSvr(site, dir)
    const shares = []
    for (let i = 0; i < Number(process.argv[2] || 8); i++) {
      const before = svr.workerPids.map(cpuTicks)
      execFileSync('wrk', ['-t1', '-c5', '-d2s', `http://127.0.0.1:${svr.port}/fibonacci?n=20000`])
      const d = svr.workerPids.map((p, j) => cpuTicks(p) - before[j])
      shares.push(Math.min(...d) / Math.max(...d))
    }
    console.log('min/max CPU share per run:', shares.map((s) => s.toFixed(2)).join(' '))
  } finally {
    await stopAll()
    await fs.rm(dir, { recursive: true, force: true })
  }
}
main()
