'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')

const INDEX = '<h1>test index</h1>\n'

async function hasIPv6Loopback () {
  const server = net.createServer()
  try {
    await new Promise((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '::1', resolve)
    })
    return true
  } catch {
    return false
  } finally {
    server.close()
  }
}

/** A site whose webroot is the directory of config.json, as in an SVR.JS install. */
async function makeInstallLikeSite (t, config, files) {
  const site = await makeSite(t, { workers: 1, wwwroot: '.', rewriteDirtyURLs: true, ...config }, {})
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(site.dir, name)
    await fs.mkdir(path.dirname(file), { recursive: true })
    await fs.writeFile(file, content)
  }
  return site
}

async function expectStatus (port, target, status, opts) {
  const res = await request(port, target, opts)
  assert.equal(res.status, status, target)
  return res
}

describe('blacklist', () => {
  it('should refuse a listed client with 403, even for a file that exists', async (t) => {
    const site = await makeSite(t, { workers: 1, blacklist: ['127.0.0.1'] })
    const svr = await startSvr(t, site.configFile)
    for (const target of ['/', '/index.html', '/missing']) {
      const res = await expectStatus(svr.port, target, 403)
      assert.doesNotMatch(res.body, /test index/)
    }
  })

  it('should serve clients outside every listed address and range', async (t) => {
    const site = await makeSite(t, { workers: 1, blacklist: ['10.0.0.0/8', '127.0.0.2', '::1', '2001:db8::/32'] })
    const svr = await startSvr(t, site.configFile)
    const res = await expectStatus(svr.port, '/index.html', 200)
    assert.equal(res.body, INDEX)
  })

  it('should block a CIDR range and "localhost"', async (t) => {
    for (const entry of ['127.0.0.0/8', 'localhost']) {
      const site = await makeSite(t, { workers: 1, blacklist: [entry] })
      const svr = await startSvr(t, site.configFile)
      await expectStatus(svr.port, '/index.html', 403)
    }
  })

  it('should match IPv6 clients against IPv6 entries and "localhost"', async (t) => {
    if (!await hasIPv6Loopback()) {
      t.skip('no ::1 on this machine')
      return
    }
    const cases = [
      { blacklist: ['::1'], status: 403 },
      { blacklist: ['::/127'], status: 403 },
      { blacklist: ['localhost'], status: 403 },
      { blacklist: ['127.0.0.1', 'fe80::/10'], status: 200 }
    ]
    for (const { blacklist, status } of cases) {
      const site = await makeSite(t, { workers: 1, port: '[::1]:0', blacklist })
      const svr = await startSvr(t, site.configFile)
      await expectStatus(svr.port, '/index.html', status, { host: '::1' })
    }
  })
})

// A request from a given loopback address (Linux routes all of 127.0.0.0/8 to lo).
function statusFrom (port, localAddress) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/index.html', localAddress, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
  })
}

describe('blacklist of 100,000 entries', () => {
  it('should block exactly the listed addresses, the edges of its ranges and IPv4-mapped IPv6 entries', async (t) => {
    const blacklist = []
    for (let i = 0; i < 100000; i++) blacklist.push(i % 2 === 0 ? `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` : `172.${16 + ((i >> 16) & 15)}.${(i >> 8) & 255}.0/24`)
    // Spread between the others, where an index built wrongly would lose them.
    blacklist.splice(31337, 0, '127.0.0.2')
    blacklist.splice(50000, 0, '127.0.1.0/24')
    blacklist.splice(77777, 0, '::ffff:127.0.2.0/120', '2001:db8::/32')
    const site = await makeSite(t, { workers: 1, blacklist })
    const svr = await startSvr(t, site.configFile)
    const expected = {
      '127.0.0.1': 200,
      '127.0.0.2': 403,
      '127.0.0.3': 200,
      '127.0.0.255': 200,
      '127.0.1.0': 403,
      '127.0.1.255': 403,
      '127.0.2.0': 403,
      '127.0.2.255': 403,
      '127.0.3.0': 200
    }
    const actual = {}
    for (const address of Object.keys(expected)) actual[address] = await statusFrom(svr.port, address)
    assert.deepEqual(actual, expected)
  })
})

describe('forbidden paths', () => {
  const files = {
    'index.html': INDEX,
    'config.json~': '{"secret": true}',
    '.config.json.swp': 'swap',
    'serverSideScript.js': '// secret code\n',
    'mods/readme.txt': 'mod notes',
    'node_modules/x/package.json': '{}',
    'cert/key.key': 'PRIVATE KEY',
    'cert/cert.crt': 'CERTIFICATE',
    '.env': 'SECRET=1',
    '.git/config': '[core]',
    'sub/.hidden': 'hidden',
    '.well-known/security.txt': 'Contact: mailto:security@example.com\n',
    '.well-known/.secret': 'nested dotfile',
    'public/file.txt': 'public'
  }

  describe('with the defaults', () => {
    const scope = createScope()
    let port

    before(async () => {
      const site = await makeInstallLikeSite(scope, {}, files)
      port = (await startSvr(scope, site.configFile)).port
    })
    after(() => scope.cleanup())

    it('should refuse the config file, its backups, keys and code in any letter case', async () => {
      const denied = ['/config.json', '/CONFIG.JSON', '/Config.Json', '/conf%69g.json', '//config.json',
        '/config.json/', '/config.json~', '/CONFIG.JSON~', '/.config.json.swp', '/serverSideScript.js',
        '/SERVERSIDESCRIPT.JS', '/mods', '/mods/', '/mods/readme.txt', '/MODS/README.TXT', '/node_modules/x/package.json',
        '/cert/key.key', '/cert/cert.crt']
      for (const target of denied) {
        const res = await expectStatus(port, target, 403)
        assert.doesNotMatch(res.body, /secret|PRIVATE|CERTIFICATE/, target)
      }
    })

    it('should refuse dotfiles and dot-directories with 403', async () => {
      for (const target of ['/.env', '/.git/config', '/.GIT/config', '/sub/.hidden', '/%2eenv', '/.well-known/.secret']) {
        const res = await expectStatus(port, target, 403)
        assert.doesNotMatch(res.body, /SECRET|\[core\]|hidden|nested/, target)
      }
    })

    it('should serve everything else', async () => {
      assert.equal((await expectStatus(port, '/index.html', 200)).body, INDEX)
      assert.equal((await expectStatus(port, '/public/file.txt', 200)).body, 'public')
      // Names that only start like a protected one are ordinary paths.
      await expectStatus(port, '/modsx', 404)
      await expectStatus(port, '/config.jsonx', 404)
    })

    it('should give each path its verdict again when it is asked again, between other paths', async () => {
      const asked = [['/index.html', 200], ['/config.json', 403], ['/public/file.txt', 200], ['/mods/readme.txt', 403],
        ['/Config.Json', 403], ['/modsx', 404], ['/config.json?x=1', 403], ['/config.json?' + 'a'.repeat(1100), 403],
        ['/index.html?' + 'a'.repeat(1100), 200]]
      for (let round = 0; round < 3; round++) {
        for (const [target, status] of asked) await expectStatus(port, target, status)
      }
    })

    it('should always serve /.well-known/', async () => {
      const res = await expectStatus(port, '/.well-known/security.txt', 200)
      assert.equal(res.body, files['.well-known/security.txt'])
    })
  })

  it('should answer dotfiles with 404 when dotfiles is "ignore", and still refuse the config with 403', async (t) => {
    const site = await makeInstallLikeSite(t, { dotfiles: 'ignore' }, files)
    const svr = await startSvr(t, site.configFile)
    for (const target of ['/.env', '/.git/config', '/sub/.hidden']) {
      const res = await expectStatus(svr.port, target, 404)
      assert.doesNotMatch(res.body, /SECRET|\[core\]|hidden/)
    }
    await expectStatus(svr.port, '/config.json', 403)
    await expectStatus(svr.port, '/.config.json.swp', 403)
  })

  it('should serve dotfiles when dotfiles is "allow", and code directories when disableServerSideScriptExpose is off', async (t) => {
    const site = await makeInstallLikeSite(t, { dotfiles: 'allow', disableServerSideScriptExpose: false }, files)
    const svr = await startSvr(t, site.configFile)
    assert.equal((await expectStatus(svr.port, '/.env', 200)).body, 'SECRET=1')
    assert.equal((await expectStatus(svr.port, '/mods/readme.txt', 200)).body, 'mod notes')
    for (const target of ['/config.json', '/CONFIG.JSON', '/.config.json.swp', '/config.json~', '/cert/key.key']) {
      await expectStatus(svr.port, target, 403)
    }
  })

  it('should not refuse anything for files that lie outside the webroot', async (t) => {
    const site = await makeSite(t, { workers: 1 }, { 'config.json': 'webroot copy', 'mods/list.txt': 'fine' })
    const svr = await startSvr(t, site.configFile)
    // Only the config file in use is protected; this one is ordinary content,
    // and so is a mods/ directory that is not the one mods are loaded from.
    assert.equal((await expectStatus(svr.port, '/config.json', 200)).body, 'webroot copy')
    assert.equal((await expectStatus(svr.port, '/mods/list.txt', 200)).body, 'fine')
  })
})
