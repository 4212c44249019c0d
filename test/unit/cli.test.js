'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { parseArgs } = require('../../lib/primary/cli')

const INSTALL = '/opt/svr'

describe('parseArgs(argv, installDir)', () => {
  it('should default to running with config.json beside svr.js', () => {
    const args = parseArgs([], INSTALL)
    assert.equal(args.action, 'run')
    assert.equal(args.configFile, path.join(INSTALL, 'config.json'))
    assert.equal(args.singleThreaded, false)
    assert.equal(args.disableMods, false)
  })

  it('should resolve --config PATH and --config=PATH against the working directory', () => {
    assert.equal(parseArgs(['--config', 'x/c.json'], INSTALL).configFile, path.resolve('x/c.json'))
    assert.equal(parseArgs(['--config=/etc/svr/config.json'], INSTALL).configFile, '/etc/svr/config.json')
  })

  it('should recognise the mode flags', () => {
    const args = parseArgs(['--single-threaded', '--disable-mods', '--secure', '-t'], INSTALL)
    assert.deepEqual([args.action, args.singleThreaded, args.disableMods, args.secure], ['check', true, true, true])
  })

  it('should treat SVR.JS help spellings as --help', () => {
    for (const flag of ['-h', '--help', '-?', '/h', '/?']) assert.equal(parseArgs([flag], INSTALL).action, 'help')
  })

  it('should accept the SVR.JS 4.x flags that have no meaning here', () => {
    assert.equal(parseArgs(['--stdout-notty', '--no-save-config'], INSTALL).action, 'run')
  })

  it('should throw SVR_ERR_BAD_FLAG naming an unknown flag', () => {
    assert.throws(() => parseArgs(['--reset'], INSTALL), { code: 'SVR_ERR_BAD_FLAG', message: /--reset/ })
    assert.throws(() => parseArgs(['--config'], INSTALL), { code: 'SVR_ERR_BAD_FLAG' })
  })
})
