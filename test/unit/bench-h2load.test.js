'use strict'

// bench/tls.js h2loadRun: a timed h2load run that does not end is stopped
// after its window and a grace, and tried again; only when every timed try
// fails is the rate measured by count. A stand-in h2load on PATH plays the
// runs: it logs its arguments and, per call, hangs or prints a report.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { h2loadRun } = require('../../bench/tls')

const URL = 'https://127.0.0.1:1/1k.html'

// The lines of h2load 1.52's report that bench/tls.js reads.
function report (rps) {
  return [
    `finished in 1.00s, ${rps}.00 req/s, 1.00MB/s`,
    `requests: ${rps} total, ${rps + 500} started, ${rps} done, ${rps} succeeded, 0 failed, 0 errored, 0 timeout`,
    `status codes: ${rps} 2xx, 0 3xx, 0 4xx, 0 5xx`
  ].join('\n')
}

// Call N (from 1) does what line N of `plan` says: "hang" or a rate.
const STAND_IN = `#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
n=$(wc -l < "$dir/calls")
what=$(sed -n "\${n}p" "$dir/plan")
if [ "$what" = hang ]; then exec sleep 60; fi
cat "$dir/report-$what"
`

describe('h2load runs that do not end', () => {
  let dir
  let savedPath
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-h2load-'))
    await fs.writeFile(path.join(dir, 'h2load'), STAND_IN, { mode: 0o755 })
    for (const rps of [700, 900]) await fs.writeFile(path.join(dir, 'report-' + rps), report(rps) + '\n')
    savedPath = process.env.PATH
    process.env.PATH = dir + path.delimiter + savedPath
  })
  after(async () => {
    process.env.PATH = savedPath
    await fs.rm(dir, { recursive: true, force: true })
  })

  // The progress lines h2loadRun writes to stderr are kept, not printed.
  async function play (plan) {
    await fs.writeFile(path.join(dir, 'plan'), plan.join('\n') + '\n')
    await fs.rm(path.join(dir, 'calls'), { force: true })
    const said = []
    const { error } = console
    console.error = (line) => said.push(line)
    let result
    try {
      result = await h2loadRun(URL, 1, 400, { graceS: 0.5 })
    } finally {
      console.error = error
    }
    const calls = (await fs.readFile(path.join(dir, 'calls'), 'utf8')).trim().split('\n')
    return { result, calls, said }
  }

  it('should end a hung timed run and take the next one, over twice the window', async () => {
    const { result, calls, said } = await play(['hang', '900'])
    assert.deepEqual(calls, ['-c50 -m10 -D 1 ' + URL, '-c50 -m10 -D 2 ' + URL])
    assert.deepEqual(said, [`h2load -D 1 failed: h2load -c50 -m10 -D 1 ${URL} did not end within 1.5 s`])
    assert.deepEqual(result, { rps: 900, requests: 900, non2xx: 0, errors: 0 })
  })

  it('should try the timed run three times before measuring by count', async () => {
    const { result, calls, said } = await play(['hang', 'hang', 'hang', '700'])
    assert.deepEqual(calls, [
      '-c50 -m10 -D 1 ' + URL,
      '-c50 -m10 -D 2 ' + URL,
      '-c50 -m10 -D 2 ' + URL,
      // The rate given (400 req/s) times the window.
      '-c50 -m10 -n 400 ' + URL
    ])
    assert.equal(result.rps, 700)
    assert.equal(said.length, 4)
    assert.equal(said[3], `h2load -D failed 3 times, measuring by count: h2load -c50 -m10 -D 2 ${URL} did not end within 2.5 s`)
  })
})
