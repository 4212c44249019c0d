'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { buildForbiddenPaths, comparablePath, findForbidden, webrootPath } = require('../../lib/access/forbidden-paths')
const { codeLocations } = require('../../lib/application/locate')
const { hasDotSegment } = require('../../lib/pipeline/stages/forbidden')

// Paths that do not exist, so realpath resolution leaves them alone.
const INSTALL = path.resolve('/nonexistent-svr-test/opt/svr')

function options (config, configFile = path.join(INSTALL, 'config.json')) {
  return {
    configFile,
    installDir: INSTALL,
    config: {
      wwwroot: INSTALL,
      cert: path.join(INSTALL, 'cert', 'cert.crt'),
      key: path.join(INSTALL, 'cert', 'key.key'),
      sni: {},
      disableServerSideScriptExpose: true,
      exposeServerVersion: false,
      useWebRootServerSideScript: false,
      ...config
    }
  }
}

function forbidden (table, decoded) {
  return findForbidden(table, comparablePath(decoded))
}

// The table as the stages build it.
function build (opts) {
  return buildForbiddenPaths(opts, codeLocations(opts))
}

describe('buildForbiddenPaths', () => {
  it('should protect the SVR.JS layout when the webroot is the install directory', () => {
    const table = build(options({
      sni: { 'a.example': { cert: path.join(INSTALL, 'sni', 'a.crt'), key: path.join(INSTALL, 'sni', 'a.key') } }
    }))
    for (const p of ['/config.json', '/CONFIG.JSON', '/config.json~', '/#config.json#', '/config.json.bak',
      '/.config.json.swp', '/cert/cert.crt', '/cert/key.key', '/sni/a.crt', '/sni/A.KEY', '/svr.js', '/package.json',
      '/lib', '/lib/', '/lib/pipeline.js', '/log', '/log/x.log', '/temp/', '/temp/a/b', '/serverSideScript.js',
      '/mods/a.js', '/node_modules/send/index.js', '//config.json', '/mods//x']) {
      assert.notEqual(forbidden(table, p), null, p)
    }
    for (const p of ['/', '/index.html', '/config.jsonx', '/logs/x', '/lib.js', '/cert/other.crt', '/sni/b.key',
      '/modsx/a', '/public/config.json']) {
      assert.equal(forbidden(table, p), null, p)
    }
  })

  it('should say why a path is refused', () => {
    const table = build(options({}))
    assert.match(forbidden(table, '/config.json'), /configuration/)
    assert.match(forbidden(table, '/temp/x'), /temporary/)
    assert.match(forbidden(table, '/log/x'), /log/)
    assert.match(forbidden(table, '/svr.js'), /sources/)
  })

  it('should list only a top-level serverSideScript.js when the webroot is elsewhere', () => {
    const table = build(options({ wwwroot: path.join(INSTALL, 'webroot') }))
    assert.deepEqual([...table.files.keys()], ['/serversidescript.js'])
    assert.equal(table.dirs.size, 0)
  })

  it('should protect the script, its node_modules and mods beside a config file in the webroot', () => {
    const site = path.join(INSTALL, 'site')
    const table = build(options({ wwwroot: site }, path.join(site, 'conf', 'config.json')))
    for (const p of ['/conf/config.json', '/conf/serverSideScript.js', '/conf/mods/a.js', '/conf/node_modules/x',
      '/serverSideScript.js']) {
      assert.notEqual(forbidden(table, p), null, p)
    }
    assert.equal(forbidden(table, '/mods/a.js'), null)
    assert.equal(forbidden(table, '/node_modules/x'), null)
  })

  it('should protect node_modules beside a webroot serverSideScript.js', () => {
    const site = path.join(INSTALL, 'site')
    const table = build(options({ wwwroot: site, useWebRootServerSideScript: true }))
    assert.notEqual(forbidden(table, '/node_modules/x/index.js'), null)
    assert.notEqual(forbidden(table, '/serverSideScript.js'), null)
  })

  it('should list nothing outside the webroot without disableServerSideScriptExpose', () => {
    const table = build(options({ wwwroot: path.join(INSTALL, 'webroot'), disableServerSideScriptExpose: false }))
    assert.equal(table.files.size + table.dirs.size, 0)
  })

  it('should protect the config file in use wherever it lives inside the webroot', () => {
    const configFile = path.join(INSTALL, 'site', 'etc', 'svr.json')
    const table = build(options({ wwwroot: path.join(INSTALL, 'site') }, configFile))
    assert.notEqual(forbidden(table, '/etc/svr.json'), null)
    assert.notEqual(forbidden(table, '/ETC/SVR.JSON~'), null)
    assert.equal(forbidden(table, '/etc/other.json'), null)
  })

  it('should serve svr.js with exposeServerVersion and without disableServerSideScriptExpose', () => {
    const table = build(options({ exposeServerVersion: true, disableServerSideScriptExpose: false }))
    assert.equal(forbidden(table, '/svr.js'), null)
    assert.equal(forbidden(table, '/mods/a.js'), null)
    assert.notEqual(forbidden(table, '/config.json'), null)
    assert.notEqual(forbidden(table, '/temp/x'), null)
  })
})

describe('webrootPath', () => {
  it('should give the lower-case webroot-relative path of a file inside, null otherwise', () => {
    assert.equal(webrootPath('/srv/www', '/srv/www/A/B.txt'), '/a/b.txt')
    assert.equal(webrootPath('/srv/www', '/srv/www'), null)
    assert.equal(webrootPath('/srv/www', '/srv/other/x'), null)
    assert.equal(webrootPath('/srv/www', '/srv/wwwx/x'), null)
    assert.equal(webrootPath('/srv/www', '/srv/www/..foo'), '/..foo')
  })
})

describe('hasDotSegment', () => {
  it('should find any segment starting with a dot, except a leading .well-known', () => {
    for (const p of ['/.env', '/.git/config', '/a/.b', '/a/.b/c', '/.well-known/.x', '/.well-knownx/a', '/x/.well-known/a']) {
      assert.equal(hasDotSegment(p), true, p)
    }
    for (const p of ['/', '/a.b', '/a/b.', '/.well-known', '/.well-known/', '/.well-known/security.txt', '/a/b/c']) {
      assert.equal(hasDotSegment(p), false, p)
    }
  })
})
