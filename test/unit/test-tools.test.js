'use strict'

// The test suite's own rules for system tools: one list of them with their
// Debian packages, the same packages in .ci/run and the README, a skip with
// the install command outside CI, a failure under CI, and one summary line;
// the Node.js versions CI tests are the ones the README supports; ports
// for servers told theirs in advance that nothing else takes.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { execFile, spawn } = require('node:child_process')
const fs = require('node:fs')
const fsp = require('node:fs/promises')
const path = require('node:path')
const { TOOLS, GO_TOOLS, portRange } = require('../helpers/tools')
const { skipSummary, FailureList } = require('../reporter')

const ROOT = path.join(__dirname, '..', '..')
const TOOLS_MODULE = path.join(__dirname, '..', 'helpers', 'tools.js')

/** Print `requireTools(null, ...names)` in a fresh process with only this environment. */
function requireIn (env, names) {
  const code = `console.log(require(${JSON.stringify(TOOLS_MODULE)}).requireTools(null, ...${JSON.stringify(names)}))`
  return new Promise((resolve) => {
    execFile(process.execPath, ['-e', code], { env }, (err, stdout, stderr) => {
      resolve({ code: err ? err.code : 0, stdout, stderr })
    })
  })
}

describe('system tools of the tests', () => {
  it('.ci/run and the README install exactly the packages of TOOLS', async () => {
    const packages = [...new Set(Object.values(TOOLS))].sort()
    const ci = await fsp.readFile(path.join(ROOT, '.ci', 'run'), 'utf8')
    const ciList = ci.match(/^APT_PACKAGES=\(([^)]*)\)$/m)
    assert.ok(ciList, '.ci/run has an APT_PACKAGES line')
    assert.deepEqual(ciList[1].split(' ').sort(), packages)
    const readme = await fsp.readFile(path.join(ROOT, 'README.md'), 'utf8')
    const readmeList = readme.match(/^sudo apt-get install -y (.*)$/m)
    assert.ok(readmeList, 'README has the apt-get install command')
    assert.equal(readmeList[1], ciList[1])
  })

  it('.ci/run and the README build exactly the Go programs of GO_TOOLS', async () => {
    const modules = Object.values(GO_TOOLS).sort()
    const ci = await fsp.readFile(path.join(ROOT, '.ci', 'run'), 'utf8')
    const ciList = ci.match(/^GO_TOOLS=\(([^)]*)\)$/m)
    assert.ok(ciList, '.ci/run has a GO_TOOLS line')
    assert.deepEqual(ciList[1].split(' ').sort(), modules)
    const readme = await fsp.readFile(path.join(ROOT, 'README.md'), 'utf8')
    const readmeList = readme.match(/^go install (.*)$/m)
    assert.ok(readmeList, 'README has the go install command')
    assert.deepEqual(readmeList[1].split(' ').sort(), modules)
  })

  it('.ci/run tests the Node.js versions the README supports, which package.json engines allow', async () => {
    const ci = await fsp.readFile(path.join(ROOT, '.ci', 'run'), 'utf8')
    const ciList = ci.match(/^NODE_VERSIONS=\(([^)]*)\)$/m)
    assert.ok(ciList, '.ci/run has a NODE_VERSIONS line')
    const versions = ciList[1].split(' ')
    for (const version of versions) assert.match(version, /^\d+\.\d+\.\d+$/, 'an exact release')
    const majors = versions.map((version) => Number(version.split('.')[0]))
    const readme = await fsp.readFile(path.join(ROOT, 'README.md'), 'utf8')
    const section = readme.match(/^### Node\.js versions\n\n([\s\S]*?)\n#/m)
    assert.ok(section, 'README has a "Node.js versions" section')
    const text = section[1].replace(/\s+/g, ' ')
    assert.ok(text.startsWith(`svr supports Node.js ${majors.join(' and ')}:`), text)
    assert.ok(text.includes(`releases ${versions.join(' and ')}`), text)
    const { engines } = JSON.parse(await fsp.readFile(path.join(ROOT, 'package.json'), 'utf8'))
    const lowest = engines.node.match(/^>=(\d+)$/)
    assert.ok(lowest, 'engines.node is ">=N"')
    assert.ok(majors.every((major) => major >= Number(lowest[1])), 'engines allows every supported version')
    if (Number(lowest[1]) < Math.min(...majors)) assert.ok(text.includes(`Node.js ${lowest[1]} still works`), 'the README says what engines allows beyond the supported versions')
  })

  it('outside CI a missing Go tool names its go install command', async () => {
    const nowhere = path.join(ROOT, 'no-such-directory')
    const outside = await requireIn({ PATH: nowhere, GOPATH: nowhere }, ['pebble'])
    assert.equal(outside.stdout, 'false\n')
    const inCi = await requireIn({ PATH: nowhere, GOPATH: nowhere, CI: 'yes' }, ['pebble', 'nginx'])
    assert.equal(inCi.code, 1)
    assert.match(inCi.stderr, /needs pebble, nginx, not on PATH \(apt-get install -y nginx; go install github\.com\/letsencrypt\/pebble\/v2\/cmd\/pebble@v2\.10\.1\); under CI it must run/)
  })

  it('outside CI a missing tool is a reason naming it and its package, under CI a failure', async () => {
    const nowhere = path.join(ROOT, 'no-such-directory')
    const outside = await requireIn({ PATH: nowhere }, ['nginx', 'start-stop-daemon'])
    assert.equal(outside.code, 0, outside.stderr)
    assert.equal(outside.stdout, 'false\n')
    const inCi = await requireIn({ PATH: nowhere, CI: 'yes' }, ['nginx', 'start-stop-daemon'])
    assert.equal(inCi.code, 1)
    assert.match(inCi.stderr, /needs nginx, start-stop-daemon, not on PATH \(apt-get install -y nginx dpkg\); under CI it must run/)
    const present = await requireIn({ PATH: path.dirname(process.execPath), CI: 'yes' }, [])
    assert.equal(present.stdout, 'true\n')
  })

  it('hands out ports the kernel never picks itself (for port 0 or a connection), a different one to each process', async (t) => {
    const range = portRange()
    if (range === null) return t.skip('no room below the ephemeral range here')
    const ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0])
    // Three test processes at once, each holding its ports until told to exit.
    const code = `require(${JSON.stringify(TOOLS_MODULE)}).freePorts(20).then((ports) => console.log(JSON.stringify(ports)))
      process.stdin.resume()`
    const children = Array.from({ length: 3 }, () => spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] }))
    t.after(() => children.forEach((child) => child.stdin.end()))
    const lists = await Promise.all(children.map((child) => new Promise((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (chunk) => {
        out += chunk
        if (out.endsWith('\n')) resolve(JSON.parse(out))
      })
      child.on('exit', (status) => reject(new Error('exited with ' + status + ' before printing its ports')))
    })))
    const ports = lists.flat()
    assert.equal(new Set(ports).size, 60, 'no port handed out twice')
    for (const port of ports) assert.ok(port >= range.low && port < ephemeralLow, `${port} is below the ephemeral range (${ephemeralLow})`)
  })

  it('sums up the skips in one line, by reason', () => {
    assert.equal(skipSummary(new Map()), 'skip summary: nothing skipped')
    const skipped = new Map([
      ['needs nginx, not on PATH (apt-get install -y nginx)', { test: 3, suite: 0 }],
      ['needs chromium, not on PATH (apt-get install -y chromium)', { test: 0, suite: 1 }],
      ['needs root (sudo npm test)', { test: 1, suite: 0 }]
    ])
    assert.equal(skipSummary(skipped), 'skip summary: 4 tests, 1 suite skipped — ' +
      '1 suite: needs chromium, not on PATH (apt-get install -y chromium); ' +
      '3 tests: needs nginx, not on PATH (apt-get install -y nginx); ' +
      '1 test: needs root (sudo npm test)')
  })

  it('names each failed test by its file and suites, with what it threw on one line', () => {
    const cwd = process.cwd()
    const failures = new FailureList()
    const events = [
      { type: 'test:start', data: { file: cwd + '/test/a.test.js', nesting: 0, name: 'suite A' } },
      { type: 'test:start', data: { file: cwd + '/test/b.test.js', nesting: 0, name: 'suite B' } },
      { type: 'test:start', data: { file: cwd + '/test/a.test.js', nesting: 1, name: 'first' } },
      { type: 'test:start', data: { file: cwd + '/test/a.test.js', nesting: 1, name: 'second' } },
      { type: 'test:start', data: { file: cwd + '/test/b.test.js', nesting: 1, name: 'third' } },
      { type: 'test:fail', data: { file: cwd + '/test/a.test.js', nesting: 1, name: 'second', details: { type: 'test', error: Object.assign(new Error('wrapped'), { code: 'ERR_TEST_FAILURE', cause: new Error('Expected values to be strictly equal:\n\n1 !== 2\n') }) } } },
      { type: 'test:fail', data: { file: cwd + '/test/a.test.js', nesting: 0, name: 'suite A', details: { type: 'suite', error: new Error('1 subtest failed') } } },
      { type: 'test:fail', data: { file: cwd + '/test/b.test.js', nesting: 1, name: 'third', details: { type: 'test', error: new Error('x'.repeat(300)) } } }
    ]
    for (const event of events) failures.observe(event)
    assert.deepEqual(failures.lines(), [
      'failed: test/a.test.js › suite A › second — Expected values to be strictly equal: 1 !== 2',
      'failed: test/b.test.js › suite B › third — ' + 'x'.repeat(199) + '…'
    ])
  })
})
