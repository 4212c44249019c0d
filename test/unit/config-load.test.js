'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { formatProblems, schema } = require('../../lib/config/load')
const { loadConfig } = require('../../lib/primary/options')
const { parseListenSpec } = require('../../lib/listen')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'svrjs-3-config.json')
const SHIPPED = path.join(__dirname, '..', '..', 'config.json')
const INSTALL = '/opt/svr'
const KEYS = Object.keys(schema.properties)
const IGNORED = KEYS.filter((key) => schema.properties[key]['x-svr'] === 'ignored')
const NEW = KEYS.filter((key) => schema.properties[key]['x-svr'] === 'new')
// Keys the loaded configuration holds resolved: absolute paths, acme's names and storage.
const RESOLVED = new Set(['wwwroot', 'cert', 'key', 'acme', 'responseCache'])

async function tempDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-config-'))
  t.after(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

/** Write `content` (an object, or raw text) as config.json in a temp dir. */
async function writeConfig (t, content, name = 'config.json') {
  const dir = await tempDir(t)
  const file = path.join(dir, name)
  await fs.writeFile(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  return file
}

async function load (t, content) {
  return loadConfig(await writeConfig(t, content), { installDir: INSTALL })
}

/** The problems a config produces; fails when it loads. */
async function problemsOf (t, content) {
  const file = await writeConfig(t, content)
  const err = await loadConfig(file, { installDir: INSTALL }).then(
    () => assert.fail('expected the configuration to be rejected'),
    (e) => e
  )
  assert.equal(err.code, 'SVR_ERR_CONFIG_INVALID')
  return err.problems
}

function assertDeepFrozen (value, where = 'config') {
  if (typeof value !== 'object' || value === null) return
  assert.ok(Object.isFrozen(value), where + ' is not frozen')
  for (const [key, child] of Object.entries(value)) assertDeepFrozen(child, where + '.' + key)
}

describe('loadConfig(file, { installDir })', () => {
  describe('with an unmodified SVR.JS 3.x config.json', () => {
    it('should load it', async () => {
      const config = await loadConfig(FIXTURE, { installDir: INSTALL })
      assert.equal(config.port, 80)
      assert.equal(config.domain, 'example.com')
      assert.equal(config.rewriteMap[0].replacements[0].replacement, '/NONEXISTENT_PAGE$1')
      assert.equal(config.dontCompress.length, 5)
      assert.deepEqual(config.users.map((u) => [u.name, u.pbkdf2, u.scrypt]),
        [['alice', false, false], ['bob', true, false], ['carol', false, true]])
      assert.deepEqual(config.nonStandardCodes.map((entry) => entry.scode), [301, 308, 401, 403, 410])
      assert.equal(config.http2Settings.maxConcurrentStreams, 100)
      assert.equal(config.enableDirectoryListingVHost[1].enabled, false)
    })

    it('should use a fixture that has every SVR.JS key of the schema', async () => {
      const fixture = JSON.parse(await fs.readFile(FIXTURE, 'utf8'))
      const svrjsKeys = KEYS.filter((key) => !NEW.includes(key))
      assert.deepEqual(svrjsKeys.filter((key) => !(key in fixture)), [])
    })

    it('should keep the values it was given', async () => {
      const fixture = JSON.parse(await fs.readFile(FIXTURE, 'utf8'))
      const config = await loadConfig(FIXTURE, { installDir: INSTALL })
      for (const key of Object.keys(fixture)) {
        if (IGNORED.includes(key) || key === 'domian' || RESOLVED.has(key) || key === 'sni') continue
        if (key === 'rewriteMap' || key === 'nonStandardCodes' || key === 'users') continue
        assert.deepEqual(config[key], fixture[key], key)
      }
    })

    it('should leave out the keys svr ignores', async () => {
      const config = await loadConfig(FIXTURE, { installDir: INSTALL })
      for (const key of [...IGNORED, 'domian']) assert.equal(key in config, false, key)
    })
  })

  it('should load the shipped development config.json', async () => {
    const config = await loadConfig(SHIPPED, { installDir: path.dirname(SHIPPED) })
    assert.equal(config.port, 8080)
    assert.equal(config.wwwroot, path.join(path.dirname(SHIPPED), 'webroot'))
  })

  describe('defaults', () => {
    it('should fill every missing key from the schema', async (t) => {
      const config = await load(t, {})
      for (const key of KEYS) {
        if (IGNORED.includes(key) || key === 'domian' || RESOLVED.has(key)) continue
        assert.deepEqual(config[key], schema.properties[key].default, key)
      }
    })

    it('should resolve acme: its names from domain and sni, its storage under stateDirectory, its CA bundle', async (t) => {
      const file = await writeConfig(t, {
        domain: 'WWW.example.com',
        sni: { 'shop.example.com:443': { cert: 'a.crt', key: 'a.key' }, '*.example.com': { cert: 'b.crt', key: 'b.key' } },
        stateDirectory: 'state',
        acme: { caBundle: 'ca.pem' }
      })
      const config = await loadConfig(file, { installDir: INSTALL })
      const dir = path.dirname(file)
      assert.deepEqual(config.acme.names, ['www.example.com', 'shop.example.com'])
      assert.equal(config.acme.storageDirectory, path.join(dir, 'state', 'acme'))
      assert.equal(config.acme.caBundle, path.join(dir, 'ca.pem'))
      const plain = await load(t, {})
      assert.deepEqual([plain.acme.names, plain.acme.storageDirectory, plain.acme.caBundle], [[], null, null])
    })

    it('should resolve responseCache: its directory under stateDirectory, its sizes from the schema', async (t) => {
      const file = await writeConfig(t, { stateDirectory: 'state' })
      const config = await loadConfig(file, { installDir: INSTALL })
      assert.deepEqual(config.responseCache, {
        directory: path.join(path.dirname(file), 'state', 'cache'), maxSize: 268435456, maxEntrySize: 8388608, memorySize: 33554432, lockTimeout: 5000,
        allowPurge: false, purgeOnReload: false
      })
      assert.equal((await load(t, {})).responseCache.directory, null)
    })

    it('should use the safe defaults', async (t) => {
      const config = await load(t, {})
      assert.deepEqual({
        port: config.port,
        stackHidden: config.stackHidden,
        exposeServerVersion: config.exposeServerVersion,
        exposeModsInErrorPages: config.exposeModsInErrorPages,
        enableDirectoryListing: config.enableDirectoryListing,
        rewriteDirtyURLs: config.rewriteDirtyURLs,
        enableCompression: config.enableCompression,
        useWebRootServerSideScript: config.useWebRootServerSideScript,
        enableIPSpoofing: config.enableIPSpoofing,
        disableServerSideScriptExpose: config.disableServerSideScriptExpose,
        allowStatus: config.allowStatus,
        workers: config.workers,
        shutdownTimeout: config.shutdownTimeout,
        dotfiles: config.dotfiles,
        followSymlinks: config.followSymlinks,
        cacheControl: config.cacheControl,
        compressionMinSize: config.compressionMinSize,
        statusAllow: config.statusAllow
      }, {
        port: 80,
        stackHidden: true,
        exposeServerVersion: false,
        exposeModsInErrorPages: false,
        enableDirectoryListing: false,
        rewriteDirtyURLs: true,
        enableCompression: true,
        useWebRootServerSideScript: false,
        enableIPSpoofing: false,
        disableServerSideScriptExpose: true,
        allowStatus: true,
        workers: 'auto',
        shutdownTimeout: 10000,
        dotfiles: 'deny',
        followSymlinks: 'inside',
        cacheControl: [],
        compressionMinSize: 256,
        statusAllow: []
      })
    })

    it('should fill defaults inside nested entries', async (t) => {
      const config = await load(t, {
        rewriteMap: [{ definingRegex: '/^\\/a/' }],
        nonStandardCodes: [{ scode: 401, url: '/admin' }],
        users: [{ name: 'a', pass: 'ab', salt: 's' }]
      })
      const rule = config.rewriteMap[0]
      assert.deepEqual([rule.replacements, rule.isNotFile, rule.isNotDirectory, rule.allowDoubleSlashes], [[], false, false, false])
      assert.equal(config.nonStandardCodes[0].disableBruteProtection, false)
      assert.deepEqual([config.users[0].pbkdf2, config.users[0].scrypt], [false, false])
    })

    it('should fill the HTTP/2 settings from the schema, keeping those given', async (t) => {
      assert.deepEqual((await load(t, {})).http2Settings, { headerTableSize: 4096, initialWindowSize: 65535, maxConcurrentStreams: 100 })
      assert.deepEqual((await load(t, { http2Settings: { initialWindowSize: 1048576, enablePush: false } })).http2Settings,
        { headerTableSize: 4096, initialWindowSize: 1048576, maxConcurrentStreams: 100, enablePush: false })
    })

    it('should not share default objects between loads', async (t) => {
      const a = await load(t, {})
      const b = await load(t, {})
      assert.notEqual(a.dontCompress, b.dontCompress)
      assert.notEqual(a.customHeaders, b.customHeaders)
    })
  })

  describe('the loaded configuration', () => {
    it('should be deeply frozen', async () => {
      const config = await loadConfig(FIXTURE, { installDir: INSTALL })
      assertDeepFrozen(config)
      assert.throws(() => { config.rewriteMap[0].replacements[0].regex = '/x/' }, TypeError)
    })

    it('should survive a JSON round trip unchanged, as IPC requires', async () => {
      const config = await loadConfig(FIXTURE, { installDir: INSTALL })
      assert.deepEqual(JSON.parse(JSON.stringify(config)), config)
    })

    it('should leave the file untouched', async (t) => {
      const text = '{ "port": 8081,\n  "users": [] }\n'
      const file = await writeConfig(t, text)
      const before = await fs.stat(file)
      await loadConfig(file, { installDir: INSTALL })
      assert.equal(await fs.readFile(file, 'utf8'), text)
      assert.equal((await fs.stat(file)).mtimeMs, before.mtimeMs)
    })

    it('should read domian as domain when domain is absent', async (t) => {
      assert.equal((await load(t, { domian: 'old.example' })).domain, 'old.example')
      assert.equal((await load(t, { domian: 'old.example', domain: 'new.example' })).domain, 'new.example')
    })
  })

  describe('paths', () => {
    it('should put the webroot beside svr.js when wwwroot is absent', async (t) => {
      assert.equal((await load(t, {})).wwwroot, path.join(INSTALL, 'webroot'))
    })

    it('should default installDir to the directory holding svr.js', async (t) => {
      const config = await loadConfig(await writeConfig(t, {}))
      assert.equal(config.wwwroot, path.resolve(__dirname, '..', '..', 'webroot'))
    })

    it('should resolve a relative wwwroot, cert, key and sni files against the config file directory', async (t) => {
      const file = await writeConfig(t, {
        wwwroot: 'site',
        cert: 'tls/site.crt',
        key: '../keys/site.key',
        sni: { 'a.example': { cert: 'a.crt', key: '/etc/ssl/a.key' } }
      })
      const dir = path.dirname(file)
      const config = await loadConfig(file, { installDir: INSTALL })
      assert.equal(config.wwwroot, path.join(dir, 'site'))
      assert.equal(config.cert, path.join(dir, 'tls', 'site.crt'))
      assert.equal(config.key, path.join(dir, '..', 'keys', 'site.key'))
      assert.deepEqual(config.sni['a.example'], { cert: path.join(dir, 'a.crt'), key: '/etc/ssl/a.key' })
    })

    it('should resolve default cert and key against the config file directory', async (t) => {
      const file = await writeConfig(t, {})
      const config = await loadConfig(file, { installDir: INSTALL })
      assert.equal(config.cert, path.join(path.dirname(file), 'cert', 'cert.crt'))
      assert.equal(config.key, path.join(path.dirname(file), 'cert', 'key.key'))
    })

    it('should keep an absolute wwwroot', async (t) => {
      assert.equal((await load(t, { wwwroot: '/srv/www' })).wwwroot, '/srv/www')
    })

    it('should leave page404 and errorPages webroot-relative', async (t) => {
      const config = await load(t, { page404: 'errors/404.html', errorPages: [{ scode: 500, path: 'e/500.html' }] })
      assert.equal(config.page404, 'errors/404.html')
      assert.equal(config.errorPages[0].path, 'e/500.html')
    })

    it('should resolve a relative socket path but leave port numbers and addresses alone', async (t) => {
      const file = await writeConfig(t, { port: 'run/http.sock', sport: '127.0.0.1:8443' })
      const config = await loadConfig(file, { installDir: INSTALL })
      assert.equal(config.port, path.join(path.dirname(file), 'run', 'http.sock'))
      assert.equal(config.sport, '127.0.0.1:8443')
      assert.equal((await load(t, { port: '8080', sport: 0 })).port, '8080')
    })
  })

  describe('when the configuration is invalid', () => {
    it('should throw SVR_ERR_CONFIG_INVALID naming the file', async (t) => {
      const file = await writeConfig(t, { port: true })
      await assert.rejects(loadConfig(file, { installDir: INSTALL }), (err) => {
        assert.equal(err.code, 'SVR_ERR_CONFIG_INVALID')
        assert.equal(err.message, file + ': configuration is invalid')
        assert.equal(err.file, file)
        assert.ok(Array.isArray(err.problems))
        return true
      })
    })

    it('should name an unknown top-level key', async (t) => {
      assert.deepEqual(await problemsOf(t, { domainn: 'x' }), ['/: unknown key "domainn" (did you mean "domain"?)'])
    })

    it('should name an unknown nested key with its pointer', async (t) => {
      assert.deepEqual(await problemsOf(t, { rewriteMap: [{ definingRegex: '/a/', foo: 1 }] }),
        ['/rewriteMap/0: unknown key "foo"'])
      assert.deepEqual(await problemsOf(t, { http2Settings: { maxStreams: 5 } }),
        ['/http2Settings: unknown key "maxStreams"'])
    })

    it('should reject 4.x keys that 3.x did not have', async (t) => {
      assert.deepEqual(await problemsOf(t, { configVHost: [] }), ['/: unknown key "configVHost"'])
    })

    it('should give the pointer and rule for a wrong type, without coercing', async (t) => {
      assert.deepEqual(await problemsOf(t, { enableETag: 'true', shutdownTimeout: '100' }), [
        '/shutdownTimeout: must be integer (got string)',
        '/enableETag: must be boolean (got string)'
      ])
    })

    it('should list the allowed values of an enum', async (t) => {
      assert.deepEqual(await problemsOf(t, { dotfiles: 'hide' }), ['/dotfiles: must be one of deny, allow, ignore'])
    })

    it('should give the limit of a range rule', async (t) => {
      assert.deepEqual(await problemsOf(t, { workers: 0, compressionMinSize: -1 }), [
        '/workers: must be >= 1 (got 0)',
        '/compressionMinSize: must be >= 0 (got -1)'
      ])
    })

    it('should explain workers in one line', async (t) => {
      assert.deepEqual(await problemsOf(t, { workers: 'all' }), ['/workers: must be an integer >= 1 or "auto"'])
      assert.deepEqual(await problemsOf(t, { workers: 1.5 }), ['/workers: must be integer or string (got number)'])
    })

    it('should report a bad regex string with its pointer and the SyntaxError text', async (t) => {
      const problems = await problemsOf(t, {
        rewriteMap: [{ definingRegex: '/(unclosed/', replacements: [{ regex: '/a/q', replacement: 'b' }] }],
        dontCompress: ['no-slashes'],
        nonStandardCodes: [{ scode: 403, regex: '/[z-a]/' }],
        wwwrootPostfixesVHost: [{ postfix: 'x', skipRegex: '/a/b/' }],
        cacheControl: [{ regex: '/+/', value: 'no-store' }]
      })
      assert.deepEqual(problems.map((line) => line.slice(0, line.indexOf(': '))), [
        '/dontCompress/0',
        '/cacheControl/0/regex',
        '/rewriteMap/0/definingRegex',
        '/rewriteMap/0/replacements/0/regex',
        '/wwwrootPostfixesVHost/0/skipRegex',
        '/nonStandardCodes/0/regex'
      ])
      assert.match(problems[2], /^\/rewriteMap\/0\/definingRegex: invalid regex "\/\(unclosed\/": Invalid regular expression: \/\(unclosed\/: Unterminated group$/)
      assert.match(problems[3], /Invalid flags supplied to RegExp constructor 'q'/)
      assert.match(problems[5], /Range out of order in character class/)
    })

    it('should report several problems at once, one line each', async (t) => {
      const problems = await problemsOf(t, {
        wrkers: 2,
        port: 'localhost:80',
        enableCompression: 1,
        nonStandardCodes: [{ scode: 301 }],
        sni: { 'a.**.example': { cert: 'a.crt' } }
      })
      assert.deepEqual(problems, [
        '/: unknown key "wrkers" (did you mean "workers"?)',
        '/port: must be a port, "ip:port", "[v6]:port" or a socket path: "localhost" is not an IP address (host names are not resolved)',
        '/sni: invalid key "a.**.example": must be a host name with at most one "*" per label, such as "*.example.com"',
        '/sni/a.**.example: missing required key "key"',
        '/enableCompression: must be boolean (got integer)',
        '/nonStandardCodes/0: must have "url" or "regex"',
        '/nonStandardCodes/0: missing required key "location"'
      ])
    })

    it('should reject a document that is not an object', async (t) => {
      assert.deepEqual(await problemsOf(t, '[]'), ['/: must be object (got array)'])
    })

    it('should refuse a TLS minimum newer than the maximum', async (t) => {
      assert.deepEqual(await problemsOf(t, { tlsMinVersion: 'TLSv1.3', tlsMaxVersion: 'TLSv1.2' }),
        ['/tlsMinVersion: must not be newer than tlsMaxVersion (TLSv1.3 > TLSv1.2)'])
    })

    it('should check header names and values', async (t) => {
      assert.deepEqual(await problemsOf(t, { customHeaders: { 'X Bad': 'a', 'X-Split': 'a\r\nSet-Cookie: x=1' } }), [
        '/customHeaders: invalid key "X Bad": must be a valid header name',
        '/customHeaders/X-Split: must not contain line breaks or control characters (not allowed in a header value)'
      ])
    })

    it('should check user records', async (t) => {
      assert.deepEqual(await problemsOf(t, { users: [{ name: 'a:b', pass: 'xyz', salt: 's' }, { name: 'c' }] }), [
        '/users/0/name: must not contain ":" (Basic authentication splits at the first ":")',
        '/users/0/pass: must be a hexadecimal hash',
        '/users/1: missing required key "pass"',
        '/users/1: missing required key "salt"'
      ])
    })
  })

  describe('port and sport', () => {
    // Each value, and where svr then listens (a relative socket path beside
    // the configuration file).
    const valid = [
      [0, { port: 0 }],
      [80, { port: 80 }],
      [65535, { port: 65535 }],
      ['8080', { port: 8080 }],
      ['127.0.0.1:8080', { host: '127.0.0.1', port: 8080 }],
      ['[::1]:8080', { host: '::1', port: 8080 }],
      ['[::ffff:127.0.0.1]:80', { host: '127.0.0.1', port: 80 }],
      ['/run/svr.sock', { path: '/run/svr.sock' }],
      ['svr.sock', { path: 'svr.sock' }]
    ]
    for (const [value, spec] of valid) {
      it('should accept ' + JSON.stringify(value) + ' as ' + JSON.stringify(spec), async (t) => {
        const file = await writeConfig(t, { port: value, sport: value })
        const config = await loadConfig(file, { installDir: INSTALL })
        const expected = spec.path === undefined ? spec : { path: path.resolve(path.dirname(file), spec.path) }
        assert.deepEqual(parseListenSpec(config.port), expected)
        assert.deepEqual(parseListenSpec(config.sport), expected)
      })
    }

    const invalid = [
      [65536, '/port: must be <= 65535 (got 65536)'],
      [-1, '/port: must be >= 0 (got -1)'],
      [80.5, '/port: must be integer or string (got number)'],
      ['', '/port: must be a port, "ip:port", "[v6]:port" or a socket path, not empty'],
      ['70000', '/port: port 70000 is out of range (0-65535)'],
      ['127.0.0.1:99999', '/port: port 99999 is out of range (0-65535)'],
      ['127.0.0.1:123456', '/port: port 123456 is out of range (0-65535)'],
      ['127.0.0.1', '/port: an IP address needs a port: "ip:port" or "[v6]:port"'],
      ['[127.0.0.1]:80', '/port: must be a port, "ip:port", "[v6]:port" or a socket path: write IPv4 as "ip:port" and IPv6 as "[v6]:port", without a zone'],
      ['[nonsense]:80', '/port: must be a port, "ip:port", "[v6]:port" or a socket path: "nonsense" is not an IP address (host names are not resolved)']
    ]
    for (const [value, problem] of invalid) {
      it('should reject ' + JSON.stringify(value), async (t) => {
        assert.deepEqual(await problemsOf(t, { port: value }), [problem])
      })
    }
  })

  describe('address lists', () => {
    it('should accept IPs, CIDR ranges and localhost', async (t) => {
      const list = ['192.0.2.1', '10.0.0.0/8', '::1', '2001:db8::/32', '::ffff:192.0.2.1', 'localhost']
      const config = await load(t, { blacklist: list, statusAllow: list, nonStandardCodes: [{ scode: 403, url: '/x', users: list }] })
      assert.deepEqual(config.blacklist, list)
    })

    it('should reject anything else with its pointer', async (t) => {
      assert.deepEqual(await problemsOf(t, { blacklist: ['10.01.0.1', '10.0.0.0/33', '::/129', 'example.com', '1.2.3.4/x'] }), [
        '/blacklist/0: must be an IP address, a CIDR range or "localhost"',
        '/blacklist/1: CIDR prefix length must be 0-32',
        '/blacklist/2: CIDR prefix length must be 0-128',
        '/blacklist/3: must be an IP address, a CIDR range or "localhost"',
        '/blacklist/4: CIDR prefix length must be 0-32'
      ])
    })
  })

  describe('when the file is not valid JSON', () => {
    it('should throw SVR_ERR_CONFIG_PARSE with the line and column', async (t) => {
      const file = await writeConfig(t, '{\n  "port": 80\n  "secure": true\n}\n')
      await assert.rejects(loadConfig(file, { installDir: INSTALL }), (err) => {
        assert.equal(err.code, 'SVR_ERR_CONFIG_PARSE')
        assert.match(err.message, /^.*config\.json: invalid JSON: line 3, column 3: Expected ',' or '}' after property value$/)
        assert.deepEqual([err.line, err.column], [3, 3])
        assert.ok(err.cause instanceof SyntaxError)
        return true
      })
    })

    it('should place an unexpected end at the end of the file', async (t) => {
      const file = await writeConfig(t, '{\n  "port": ')
      await assert.rejects(loadConfig(file, { installDir: INSTALL }), {
        code: 'SVR_ERR_CONFIG_PARSE',
        message: /line 2, column 11: Unexpected end of JSON input$/
      })
    })

    it('should accept a UTF-8 byte order mark', async (t) => {
      assert.equal((await load(t, '\ufeff{"port": 81}')).port, 81)
    })
  })

  describe('when the file cannot be read', () => {
    it('should throw SVR_ERR_CONFIG_READ for a missing file', async (t) => {
      const file = path.join(await tempDir(t), 'nope.json')
      await assert.rejects(loadConfig(file, { installDir: INSTALL }), (err) => {
        assert.equal(err.code, 'SVR_ERR_CONFIG_READ')
        assert.equal(err.message, file + ': cannot read configuration file: no such file')
        assert.equal(err.cause.code, 'ENOENT')
        return true
      })
    })

    it('should throw SVR_ERR_CONFIG_READ for a directory', async (t) => {
      const dir = await tempDir(t)
      await assert.rejects(loadConfig(dir, { installDir: INSTALL }), {
        code: 'SVR_ERR_CONFIG_READ',
        message: /it is a directory$/
      })
    })
  })
})

describe('formatProblems(errors)', () => {
  it('should print the root pointer as "/" and drop duplicate lines', () => {
    const error = { instancePath: '', schemaPath: '#/additionalProperties', keyword: 'additionalProperties', params: { additionalProperty: 'zzz' }, parentSchema: schema }
    assert.deepEqual(formatProblems([error, { ...error }]), ['/: unknown key "zzz"'])
  })
})

describe('schema', () => {
  it('should be frozen', () => {
    assert.ok(Object.isFrozen(schema))
    assert.ok(Object.isFrozen(schema.properties.dontCompress.default))
  })

  it('should give every top-level key a type, a default and a description', () => {
    for (const key of KEYS) {
      const property = schema.properties[key]
      assert.ok(property.type !== undefined, key + ' has no type')
      assert.ok(property.default !== undefined, key + ' has no default')
      assert.equal(typeof property.description, 'string', key + ' has no description')
    }
  })

  it('should explain every difference from SVR.JS', () => {
    for (const key of KEYS) {
      const property = schema.properties[key]
      if (property['x-svr'] === undefined) continue
      assert.equal(typeof property['x-svr-note'], 'string', key)
      if (property['x-svr'] === 'ignored') assert.match(property.description, /^Ignored: /, key)
    }
  })

  it('should mark the ignored and new keys', () => {
    assert.deepEqual(IGNORED.sort(), ['disableUnusedWorkerTermination', 'enableRemoteLogBrowsing', 'optOutOfStatisticsServer',
      'productName', 'pubport', 'timestamp', 'version'])
    assert.deepEqual(NEW.sort(), [
      'acme',
      'cache',
      'cacheControl',
      'compressionMinSize',
      'crashLoopWindow',
      'dotfiles',
      'fileCacheMaxFileSize',
      'fileCacheSize',
      'fileCacheTtl',
      'followSymlinks',
      'headersTimeout',
      'healthPath',
      'healthReadyDelay',
      'keepAliveTimeout',
      'logDirectory',
      'logFlushDelay',
      'logFormat',
      'maxConnections',
      'maxFormFieldsSize',
      'maxHeaderSize',
      'maxRequestBodySize',
      'maxUploadSize',
      'metricsAllow',
      'metricsPath',
      'proxy',
      'rateLimits',
      'requestTimeout',
      'responseCache',
      'serverSideScriptFormat',
      'shutdownDelay',
      'shutdownTimeout',
      'stateDirectory',
      'statusAllow',
      'store',
      'trustedProxies',
      'watchServerSideScript',
      'workers'
    ])
  })

  it('should give every anyOf, oneOf and pattern a readable message', () => {
    const missing = []
    ;(function walk (node, where) {
      if (typeof node !== 'object' || node === null) return
      if ((node.anyOf || node.oneOf || node.pattern) && node['x-svr-message'] === undefined) missing.push(where)
      for (const [key, child] of Object.entries(node)) walk(child, where + '/' + key)
    })(schema, '#')
    assert.deepEqual(missing, [])
  })
})
