'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { scriptEnvironment, chainedRequire } = require('../../lib/application/script-environment')
const { applicationNodePath, workerEnvironment } = require('../../lib/application/process-environment')

describe('scriptEnvironment', () => {
  let root = null
  before(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-script-env-'))
    await fs.mkdir(path.join(root, 'temp'))
    await fs.mkdir(path.join(root, 'app'))
    await fs.writeFile(path.join(root, 'temp', 'kept.js'), "module.exports = 'from temp'\n")
    await fs.writeFile(path.join(root, 'kept.js'), "module.exports = 'from the server root'\n")
    await fs.writeFile(path.join(root, 'app', 'kept.js'), "module.exports = 'from the script directory'\n")
    await fs.writeFile(path.join(root, 'app', 'only-here.js'), "module.exports = 'only beside the script'\n")
    await fs.writeFile(path.join(root, 'app', 'broken.js'), "require('./no-such-dependency')\n")
  })
  after(() => fs.rm(root, { recursive: true, force: true }))

  it('gives SVR.JS\'s __dirname and __filename: <server root>/temp', () => {
    const env = scriptEnvironment({ configFile: path.join(root, 'config.json') }, path.join(root, 'app', 'serverSideScript.js'))
    assert.equal(env.dirname, path.join(root, 'temp'))
    assert.equal(env.filename, path.join(root, 'temp', 'serverSideScript.js'))
  })

  it('resolves relative paths from temp/ first, then from the script\'s own directory', () => {
    const env = scriptEnvironment({ configFile: path.join(root, 'config.json') }, path.join(root, 'app', 'serverSideScript.js'))
    assert.equal(env.require('./kept.js'), 'from temp')
    assert.equal(env.require('../kept.js'), 'from the server root')
    assert.equal(env.require('./only-here'), 'only beside the script')
    assert.equal(env.require.resolve('./only-here'), path.join(root, 'app', 'only-here.js'))
    assert.equal(env.require('node:path'), path)
  })

  it('reports a missing module as SVR.JS would, and a missing dependency of a found one as it is', () => {
    const env = scriptEnvironment({ configFile: path.join(root, 'config.json') }, path.join(root, 'app', 'serverSideScript.js'))
    assert.throws(() => env.require('./absent'), (err) => err.code === 'MODULE_NOT_FOUND' && err.message.includes("'./absent'") &&
      err.message.includes(path.join(root, 'temp', 'serverSideScript.js')))
    assert.throws(() => env.require('./broken'), (err) => err.code === 'MODULE_NOT_FOUND' && err.message.includes("'./no-such-dependency'"))
  })

  it('needs no fallback when the script lies in temp/ itself', () => {
    const req = chainedRequire(path.join(root, 'temp', 'serverSideScript.js'), null)
    assert.equal(req('./kept.js'), 'from temp')
    assert.throws(() => req('./only-here'), { code: 'MODULE_NOT_FOUND' })
  })
})

describe('applicationNodePath', () => {
  it('puts the operator\'s NODE_PATH first and svr\'s own package directories after it, once', () => {
    const own = path.join(__dirname, '..', '..', 'node_modules')
    const value = applicationNodePath('/opt/shared/node_modules' + path.delimiter + own).split(path.delimiter)
    assert.equal(value[0], '/opt/shared/node_modules')
    assert.equal(value[1], own)
    assert.equal(value.filter((dir) => dir === own).length, 1)
    assert.ok(value.includes(path.join(__dirname, '..', '..', 'lib', 'application', 'node_modules')))
  })

  it('reaches svr\'s node_modules from anywhere when unset', () => {
    const value = applicationNodePath(undefined).split(path.delimiter)
    assert.equal(value[0], path.join(__dirname, '..', '..', 'lib', 'application', 'node_modules'))
    assert.ok(value.includes(path.join(__dirname, '..', '..', 'node_modules')))
  })

  it('is set in a worker\'s environment, from the worker\'s own NODE_PATH when one is configured', () => {
    const env = workerEnvironment({ SVR_SLOT: '1', NODE_PATH: '/configured' })
    assert.equal(env.SVR_SLOT, '1')
    assert.equal(env.NODE_PATH.split(path.delimiter)[0], '/configured')
  })
})
