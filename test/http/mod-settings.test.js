'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr, runSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { packLegacyMod } = require('../helpers/mods')

// A 4.x mod that keeps its settings in config.json, as svrjs-cache-mod does
// (`cacheVaryHeaders`, `maximumCachedResponseSize`), and says what it got.
const SETTINGS_MOD = `
module.exports = function (req, res, logFacilities, config, next) {
  if (req.parsedURL.pathname === '/settings') {
    return res.end(JSON.stringify({ size: config.maximumCachedResponseSize, vary: config.cacheVaryHeaders }))
  }
  next()
}
module.exports.modInfo = { name: 'settings-mod', version: '1.0' }
module.exports.configValidators = {
  cacheVaryHeaders: (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'),
  maximumCachedResponseSize: (value) => typeof value === 'number' || value === null,
  strictSetting: (value) => { if (value !== 'ok') throw new Error('strictSetting must be "ok"'); return true }
}
`

// A 3.x mod reads the same keys from configJSON.
const LEGACY_READER = `
function Mod () {}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback, configJSON) {
  return function () {
    if (href === '/legacy-settings') return res.end(String(configJSON.maximumCachedResponseSize))
    elseCallback()
  }
}
module.exports = Mod
`

async function siteWithSettingsMod (t, config) {
  const site = await makeSite(t, { workers: 1, ...config })
  const mods = path.join(site.dir, 'mods')
  await fs.mkdir(mods)
  await fs.writeFile(path.join(mods, '10-settings.js'), SETTINGS_MOD)
  await packLegacyMod(mods, '20-legacy.tar.gz', LEGACY_READER, { name: 'legacy-reader', version: '1.0' })
  return { site, mods }
}

describe('settings that mods declare', () => {
  it('should accept the keys a mod declares and hand them to mods as configured', async (t) => {
    const { site } = await siteWithSettingsMod(t, { maximumCachedResponseSize: 4096, cacheVaryHeaders: ['accept-language'] })
    const check = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(check.code, 0, check.stderr)
    assert.equal(check.stdout, 'configuration OK: ' + site.configFile + '\n')
    const svr = await startSvr(t, site.configFile)
    assert.deepEqual(JSON.parse((await request(svr.port, '/settings')).body), { size: 4096, vary: ['accept-language'] })
    assert.equal((await request(svr.port, '/legacy-settings')).body, '4096')
  })

  it('should refuse a value the mod\'s validator refuses, naming the key and the mod', async (t) => {
    const { site } = await siteWithSettingsMod(t, { maximumCachedResponseSize: 'large', strictSetting: 'nope' })
    for (const args of [['--check-config'], []]) {
      const result = await runSvr(['--config', site.configFile, ...args])
      assert.equal(result.code, 1)
      assert.equal(result.stderr,
        site.configFile + ': /maximumCachedResponseSize: invalid value, refused by the validator of mod "settings-mod" (mods/10-settings.js)\n' +
        site.configFile + ': /strictSetting: invalid value (the validator threw Error: strictSetting must be "ok"), refused by the validator of mod "settings-mod" (mods/10-settings.js)\n')
    }
  })

  it('should still refuse a key that no loaded mod declares, suggesting the declared one', async (t) => {
    const { site } = await siteWithSettingsMod(t, { maximumCachedResponseSize: 10, cacheVaryHeader: ['accept'] })
    const result = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(result.code, 1)
    assert.equal(result.stderr, site.configFile + ': /: unknown key "cacheVaryHeader" (did you mean "cacheVaryHeaders"?)\n')
    // Without the mod nobody declares the keys.
    await fs.rm(path.join(site.dir, 'mods', '10-settings.js'))
    const without = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(without.code, 1)
    assert.equal(without.stderr, site.configFile + ': /: unknown key "maximumCachedResponseSize"\n' +
      site.configFile + ': /: unknown key "cacheVaryHeader"\n')
  })

  it('should start in safe mode with the keys unchecked, and say so', async (t) => {
    const { site } = await siteWithSettingsMod(t, { maximumCachedResponseSize: 'not checked' })
    const result = await runSvr(['--config', site.configFile, '--check-config', '--disable-mods'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stderr, 'warning: ' + site.configFile + ': /maximumCachedResponseSize: not checked: mods are disabled, and only a mod can declare this key\n')
  })

  it('should warn about a mod that declares a key of svr\'s own and keep svr\'s check', async (t) => {
    const { site, mods } = await siteWithSettingsMod(t, {})
    await fs.writeFile(path.join(mods, '30-greedy.js'), `
module.exports = (req, res, logFacilities, config, next) => next()
module.exports.modInfo = { name: 'greedy' }
module.exports.configValidators = { port: () => false }
`)
    const result = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stderr, 'warning: ' + site.configFile + ': /port: mod "greedy" (mods/30-greedy.js) declares a validator for this key, ' +
      'which svr\'s own schema checks; the mod\'s validator is not used\n')
  })

  it('should name the mod and line that fails to load, or never finishes, before any worker starts', async (t) => {
    const { site, mods } = await siteWithSettingsMod(t, {})
    const broken = path.join(mods, '40-broken.js')
    await fs.writeFile(broken, 'module.exports = () => {}\nmodule.exports.configValidators = {}\nthrow new Error("cannot load")\n')
    const failed = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(failed.code, 1)
    assert.match(failed.stderr, new RegExp('^mod ' + escape(broken) + ' failed to load: ' + escape(broken) + ':3(:\\d+)?: Error: cannot load\n$'))
    await fs.writeFile(broken, 'module.exports = () => {}\nwhile (true) {}\n')
    const started = Date.now()
    const hung = await runSvr(['--config', site.configFile, '--check-config'], { timeout: 20000 })
    assert.equal(hung.code, 1)
    assert.equal(hung.stderr, 'mod ' + broken + ' failed to load: still loading after 10000 ms\n')
    assert.ok(Date.now() - started < 15000)
  })

  it('should refuse a reload whose mod setting is refused, and keep serving the old one', async (t) => {
    const { site } = await siteWithSettingsMod(t, { maximumCachedResponseSize: 100 })
    const svr = await startSvr(t, site.configFile)
    await site.writeConfig({ workers: 1, maximumCachedResponseSize: 'bad' })
    let mark = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/\/maximumCachedResponseSize: invalid value, refused by the validator of mod "settings-mod"/, 10000, mark)
    await svr.waitFor(/reload refused: the old configuration stays in use/, 10000, mark)
    assert.deepEqual(JSON.parse((await request(svr.port, '/settings')).body), { size: 100 })
    await site.writeConfig({ workers: 1, maximumCachedResponseSize: 200 })
    mark = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 20000, mark)
    assert.deepEqual(JSON.parse((await request(svr.port, '/settings')).body), { size: 200 })
  })
})

function escape (text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
