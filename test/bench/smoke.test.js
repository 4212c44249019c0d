'use strict'

// The benchmark harness end to end in seconds: `bench/run.js --quick`
// starts svr, its variants and the baselines, loads them and prints the
// table. Its numbers are not judged here, only that there are numbers.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { requireTools } = require('../helpers/tools')

const ROOT = path.join(__dirname, '..', '..')
const RESULTS = path.join(ROOT, 'bench', 'results.md')
const TIMEOUT_MS = 60000

/**
 * Run the harness; past the timeout it gets SIGINT, on which it stops the
 * servers it started, and SIGKILL if it is still there 10 s later.
 */
function runBench (args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join('bench', 'run.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => { stdout += chunk })
    child.stderr.on('data', (chunk) => { stderr += chunk })
    let killer = null
    const timer = setTimeout(() => {
      child.kill('SIGINT')
      killer = setTimeout(() => child.kill('SIGKILL'), 10000)
    }, TIMEOUT_MS)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      clearTimeout(killer)
      if (killer !== null) return reject(new Error(`bench/run.js took over ${TIMEOUT_MS} ms:\n${stderr}`))
      resolve({ code, signal, stdout, stderr })
    })
  })
}

// The cells of the table row whose first cell is `what`.
function row (stdout, what) {
  const line = stdout.split('\n').find((l) => l.startsWith('| ' + what + ' |'))
  assert.ok(line, `no row "${what}" in:\n${stdout}`)
  return line.split('|').slice(1, -1).map((cell) => cell.trim())
}

async function stamp (file) {
  try {
    const stat = await fs.stat(file)
    return stat.mtimeMs + ':' + stat.size
  } catch (err) {
    if (err.code === 'ENOENT') return 'absent'
    throw err
  }
}

describe('benchmark smoke run', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('prints req/s of svr and the bare cluster for hello and 404, with their rows against svr\'s headers and access-log-off rows', async () => {
    const before = await stamp(RESULTS)
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'hello,404'])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^\| workload \| c \| svr req\/s \|/m)
    for (const what of ['hello world from serverSideScript.js', '404']) {
      for (const label of [what, what + ' — access log off']) {
        const cells = row(stdout, label)
        assert.ok(Number(cells[2]) > 0, `svr req/s of "${label}": ${cells[2]}`)
        assert.equal(cells[4], 'bare')
        assert.ok(Number(cells[5]) > 0, `bare req/s of "${label}": ${cells[5]}`)
      }
    }
    assert.equal(row(stdout, '404')[8], '≥ 0.8')
    for (const [what, goal] of [['hello world from serverSideScript.js', '≥ 0.9'], ['404', '≥ 0.85']]) {
      const cells = row(stdout, what + ' — against svr\'s headers')
      assert.equal(cells[2], row(stdout, what)[2], 'the same svr runs')
      assert.equal(cells[4], 'bare-headers')
      assert.ok(Number(cells[5]) > 0, `bare-headers req/s of "${what}": ${cells[5]}`)
      assert.equal(cells[8], goal)
    }
    assert.equal(row(stdout, '404 — access log off')[8], '—')
    assert.equal(await stamp(RESULTS), before, 'a quick run must not write bench/results.md')
  })

  it('prints a cost curve with its rows, their ratio to the smallest, boot and reload, without writing results', async () => {
    const before = await stamp(RESULTS)
    const { code, stdout, stderr } = await runBench(['--curves', '--quick', '--only', 'vhosts'])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^## Cost curves$/m)
    const lines = stdout.split('\n').filter((l) => /^\| (`customHeadersVHost`|″) /.test(l))
    assert.deepEqual(lines.map((l) => l.split('|')[2].trim()), ['1', '100', '1,000'])
    const first = lines[0].split('|').slice(1, -1).map((cell) => cell.trim())
    assert.equal(first[3], '1.00')
    for (const line of lines) {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
      assert.ok(Number(cells[2]) > 0, `req/s: ${line}`)
      assert.match(cells[6], /^\d+(\.\d+)? ms$/, `boot: ${line}`)
      assert.match(cells[7], /^\d+(\.\d+)? ms$/, `reload: ${line}`)
    }
    assert.equal(await stamp(RESULTS), before, 'a quick run must not write bench/results.md')
  })

  it('runs with autocannon and without an nginx that starts, leaving that baseline out', async (t) => {
    const bin = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-bench-bin-'))
    t.after(() => fs.rm(bin, { recursive: true, force: true }))
    // An nginx that exits at once, as one that cannot bind or lacks rights.
    await fs.writeFile(path.join(bin, 'nginx'), '#!/bin/sh\necho "nginx: [emerg] cannot start" >&2\nexit 1\n', { mode: 0o755 })
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'static-1k'], {
      BENCH_TOOL: 'autocannon',
      PATH: bin + path.delimiter + process.env.PATH
    })
    assert.equal(code, 0, stderr)
    assert.match(stderr, /nginx did not start/)
    assert.match(stdout, /load by autocannon/)
    const cells = row(stdout, 'static 1 KiB file')
    assert.ok(Number(cells[2]) > 0, `svr req/s: ${cells[2]}`)
    assert.equal(cells[5], 'n/a')
  })
})

// A suite of its own, so that its run does not eat into the time of the others.
describe('benchmark smoke run of the proxy row', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('prints the proxy row against nginx proxy_pass, with the 3.x proxy mod row', async (t) => {
    if (!requireTools(t, 'nginx')) return
    const { code, stdout, stderr } = await runBench(['--quick', '--only', 'proxy-1k'])
    assert.equal(code, 0, stderr)
    const what = 'proxy to a bare Node upstream, 1 KiB answer'
    for (const label of [what, what + ' — a 3.x proxy mod instead of `proxy`']) {
      const cells = row(stdout, label)
      assert.ok(Number(cells[2]) > 0, `svr req/s of "${label}": ${cells[2]}`)
      assert.equal(cells[4], 'nginx')
      assert.ok(Number(cells[5]) > 0, `nginx req/s of "${label}": ${cells[5]}`)
    }
    assert.equal(row(stdout, what)[8], '≥ 0.6')
    assert.match(stdout, /svr answered every request without socket errors, and with 2xx/)
  })
})

// A suite of its own, so that its run does not eat into the time of the others.
describe('benchmark smoke run of the HTTP/2 row', { timeout: TIMEOUT_MS + 30000 }, () => {
  it('measures svr and its baselines over HTTP/2 by h2load for a fixed time, without falling back to a count', async (t) => {
    if (!requireTools(t, 'h2load', 'nginx')) return
    const { code, stdout, stderr } = await runBench(['--tls', '--quick', '--only', 'h2-static-1k'])
    assert.equal(code, 0, stderr)
    assert.doesNotMatch(stderr, /measuring by count/)
    const what = 'static 1 KiB over HTTP/2 (`h2load -c50 -m10 -D`)'
    const lines = stdout.split('\n').filter((l) => l.startsWith('| ' + what + ' |'))
    assert.deepEqual(lines.map((l) => l.split('|')[3].trim()), ['nginx tls', 'bare h2', 'bare h2 + svr headers'])
    for (const line of lines) {
      const cells = line.split('|').slice(1, -1).map((cell) => cell.trim())
      assert.ok(Number(cells[1]) > 0, `svr req/s: ${line}`)
      assert.ok(Number(cells[3]) > 0, `baseline req/s: ${line}`)
    }
    assert.doesNotMatch(stdout, /Failed requests at svr/)
  })
})
