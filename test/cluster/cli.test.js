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

  it('should accept a full SVR.JS 3.x configuration', async (t) => {
    const fixture = JSON.parse(await fs.readFile(path.join(__dirname, '..', 'fixtures', 'svrjs-3-config.json'), 'utf8'))
    const site = await makeSite(t)
    // Its webroot (/var/www/svrjs) must exist; one of the test's stands in.
    await fs.writeFile(site.configFile, JSON.stringify({ ...fixture, wwwroot: site.webroot }))
    const { code, stdout, stderr } = await runSvr(['--config', site.configFile, '-t'])
    assert.equal(code, 0, stderr)
    assert.equal(stdout, 'configuration OK: ' + site.configFile + '\n')
  })

  it('should name /wwwroot when the webroot is missing or not a directory, and refuse to start', async (t) => {
    const site = await makeSite(t)
    await site.writeConfig({ wwwroot: 'no-such-dir' })
    const missing = path.join(site.dir, 'no-such-dir')
    const check = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(check.code, 1)
    assert.equal(check.stdout, '')
    assert.equal(check.stderr, site.configFile + ': /wwwroot: the webroot ' + missing + ' does not exist\n')
    const start = await runSvr(['--config', site.configFile])
    assert.equal(start.code, 1)
    assert.equal(start.stderr, site.configFile + ': /wwwroot: the webroot ' + missing + ' does not exist\n')
    await site.writeConfig({ wwwroot: 'config.json' })
    const file = await runSvr(['--config', site.configFile, '--single-threaded'])
    assert.equal(file.code, 1)
    assert.equal(file.stderr, site.configFile + ': /wwwroot: the webroot ' + site.configFile + ' is not a directory\n')
  })

  it('should load values SVR.JS tolerated with one warning per pointer', async (t) => {
    const site = await makeSite(t, {
      customHeaders: { 'X-Max-Age': 60 },
      nonStandardCodes: [{ url: '/gone', scode: '410' }, { url: '/odd', scode: 499 }]
    })
    const { code, stdout, stderr } = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(code, 0, stderr)
    assert.equal(stdout, 'configuration OK: ' + site.configFile + '\n')
    const prefix = 'warning: ' + site.configFile + ': '
    assert.deepEqual(stderr.trimEnd().split('\n'), [
      prefix + '/customHeaders/X-Max-Age: the number 60 is sent as the header value "60", as SVR.JS did; write it as a string',
      prefix + '/nonStandardCodes/0/scode: the string "410" is taken as the status 410, as SVR.JS did; write it as a number',
      prefix + '/nonStandardCodes/1/scode: 499 has no error page of its own; it is answered with 501 Not Implemented, as SVR.JS did'
    ])
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
    const result = await startWith(t, (site) => site.writeConfig({ nonStandardCodes: [{ scode: 'moved', url: '/a', location: '/b' }] }))
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
