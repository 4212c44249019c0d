'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, runSvr } = require('../helpers/server')

describe('command line', () => {
  it('should print usage and exit 0 with --help', async () => {
    const { code, stdout } = await runSvr(['--help'])
    assert.equal(code, 0)
    assert.match(stdout, /--check-config/)
    assert.match(stdout, /--single-threaded/)
  })

  it('should print the version with --version', async () => {
    const { code, stdout } = await runSvr(['--version'])
    assert.equal(code, 0)
    assert.match(stdout, /^svr\/\d+\.\d+\.\d+ \(\w+; Node\.js\/v\d+/)
  })

  it('should print usage and exit 2 on an unknown flag', async () => {
    const { code, stderr } = await runSvr(['--frobnicate'])
    assert.equal(code, 2)
    assert.match(stderr, /unknown command-line flag: --frobnicate/)
    assert.match(stderr, /Usage: svr/)
  })

  it('should exit 2 when --config has no value', async () => {
    const { code, stderr } = await runSvr(['--config'])
    assert.equal(code, 2)
    assert.match(stderr, /--config needs a file path/)
  })
})

describe('--check-config', () => {
  it('should print "configuration OK" and exit 0 for a valid file', async (t) => {
    const site = await makeSite(t)
    const { code, stdout } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 0)
    assert.match(stdout, /configuration OK/)
  })

  it('should accept a full SVR.JS 3.x configuration', async () => {
    const fixture = path.join(__dirname, '..', 'fixtures', 'svrjs-3-config.json')
    const { code, stdout, stderr } = await runSvr(['--config', fixture, '-t'])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /configuration OK/)
  })

  it('should list every problem and exit 1 for an invalid file', async (t) => {
    const site = await makeSite(t, { domainn: 'example.com', enableETag: 'yes', rewriteMap: [{ definingRegex: '/(unclosed/' }] })
    const { code, stdout, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 1)
    assert.doesNotMatch(stdout, /configuration OK/)
    assert.match(stderr, /domainn/)
    assert.match(stderr, /\/enableETag: .*boolean/)
    assert.match(stderr, /\/rewriteMap\/0\/definingRegex/)
  })
})

describe('starting with a bad configuration', () => {
  async function startWith (t, write) {
    const site = await makeSite(t)
    await write(site)
    return runSvr(['--config', site.configFile])
  }

  it('should name an unknown key and exit 1', async (t) => {
    const result = await startWith(t, (site) => site.writeConfig({ exposeServerVersionn: true }))
    assert.equal(result.code, 1)
    assert.match(result.stderr, /unknown key "exposeServerVersionn"/)
  })

  it('should name the JSON pointer of a wrong type and exit 1', async (t) => {
    const result = await startWith(t, (site) => site.writeConfig({ nonStandardCodes: [{ scode: '301', url: '/a', location: '/b' }] }))
    assert.equal(result.code, 1)
    assert.match(result.stderr, /\/nonStandardCodes\/0\/scode/)
  })

  it('should name the pointer of an invalid regular expression and exit 1', async (t) => {
    const result = await startWith(t, (site) => site.writeConfig({ dontCompress: ['/ok/', '/[a-/'] }))
    assert.equal(result.code, 1)
    assert.match(result.stderr, /\/dontCompress\/1/)
  })

  it('should report invalid JSON with its position and exit 1', async (t) => {
    const result = await startWith(t, (site) => fs.writeFile(site.configFile, '{\n  "port": 8080,\n  oops\n}'))
    assert.equal(result.code, 1)
    assert.match(result.stderr, /invalid JSON/)
    assert.match(result.stderr, /line 3/)
  })

  it('should report an unreadable file and exit 1', async (t) => {
    const site = await makeSite(t)
    const missing = path.join(site.dir, 'nope.json')
    const result = await runSvr(['--config', missing])
    assert.equal(result.code, 1)
    assert.match(result.stderr, /cannot read configuration file/)
    assert.match(result.stderr, /nope\.json/)
  })
})
