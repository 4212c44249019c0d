'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { runCommand } = require('../../lib/primary/console')
const { BlockState } = require('../../lib/primary/console/block-state')

const quietLog = { info () {}, warn () {}, error () {} }

function recorder () {
  const calls = []
  const actions = {
    mods: () => ['mod-a 1.0.0', 'serverSideScript.js'],
    modCommands: () => [{ name: 'purgecache', mods: ['cache-mod', 'other-mod'] }, { name: 'stop', mods: ['greedy-mod'] }],
    runModCommand: async (name, args) => { calls.push(['mod', name, args]); return ['worker 1: ran ' + name] },
    block: async (args) => { calls.push(['block', args]); return ['blocked: ' + args.join(' ')] },
    unblock: async (args) => { calls.push(['unblock', args]); return ['unblocked'] },
    purge: (args) => { calls.push(['purge', args]); return args.map((target) => 'purged ' + target) },
    close: () => { calls.push(['close']); return 'closed' },
    open: async () => { calls.push(['open']); return 'open' },
    restart: () => { calls.push(['restart']); return 'restarting' },
    stop: () => { calls.push(['stop']) }
  }
  return { calls, actions }
}

async function type (line, actions) {
  const said = []
  await runCommand(line, actions, (text) => said.push(text))
  return said
}

describe('console commands', () => {
  it('should map each SVR.JS command to its action', async () => {
    const { calls, actions } = recorder()
    assert.deepEqual(await type('  block 192.0.2.1   10.0.0.0/8 ', actions), ['blocked: 192.0.2.1 10.0.0.0/8'])
    await type('unblock 192.0.2.1', actions)
    await type('close', actions)
    await type('open', actions)
    await type('restart', actions)
    await type('stop', actions)
    assert.deepEqual(calls, [['block', ['192.0.2.1', '10.0.0.0/8']], ['unblock', ['192.0.2.1']], ['close'], ['open'],
      ['restart'], ['stop']])
  })

  it('should list mods as "N. name version"', async () => {
    assert.deepEqual(await type('mods', recorder().actions), ['1. mod-a 1.0.0\n2. serverSideScript.js'])
  })

  it('should explain what it does not understand and ignore empty lines', async () => {
    const { calls, actions } = recorder()
    assert.deepEqual(await type('', actions), [])
    assert.match((await type('kill', actions))[0], /unknown command: kill/)
    assert.match((await type('block', actions))[0], /usage: block/)
    assert.deepEqual(await type('purge', actions), ['usage: purge <url|prefix*|all> [...]'])
    assert.deepEqual(calls, [])
    assert.deepEqual(await type('purge http://a.example/x all', actions), ['purged http://a.example/x', 'purged all'])
  })

  it('should print the help and clear the screen', async () => {
    const help = (await type('help', recorder().actions)).join('\n')
    for (const command of ['help', 'mods', 'block', 'unblock', 'close', 'open', 'restart', 'stop', 'clear']) {
      assert.match(help, new RegExp('^  ' + command + '\\b', 'm'))
    }
    assert.equal((await type('clear', recorder().actions))[0], '\x1b[2J\x1b[3J\x1b[H')
  })

  it('should run the commands that mods export, list them, and keep svr\'s own first', async () => {
    const { calls, actions } = recorder()
    assert.deepEqual(await type('purgecache  /images ', actions), ['worker 1: ran purgecache'])
    const help = (await type('help', actions)).join('\n')
    assert.match(help, /^Commands of mods:\n {2}purgecache {13}from cache-mod, other-mod$/m)
    assert.doesNotMatch(help, /greedy-mod/, 'a mod command named like one of svr\'s is not reachable')
    await type('stop', actions)
    assert.deepEqual(calls, [['mod', 'purgecache', ['/images']], ['stop']])
  })
})

describe('BlockState', () => {
  async function setup (t, stateDirectory) {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-blocks-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const applied = []
    const options = { configFile: path.join(dir, 'config.json'), config: { stateDirectory } }
    return { dir, applied, state: new BlockState(options, (entries) => applied.push(entries), quietLog) }
  }

  it('should apply and save every change atomically in stateDirectory', async (t) => {
    const { dir, applied, state } = await setup(t, 'state')
    assert.deepEqual(await state.block(['192.0.2.1', '2001:db8::/32', 'nonsense', '192.0.2.1']), [
      'blocked: 192.0.2.1', 'blocked: 2001:db8::/32',
      'not blocked: nonsense: not an IP address, CIDR range or "localhost": "nonsense"', 'already blocked: 192.0.2.1'
    ])
    assert.deepEqual(applied, [['192.0.2.1', '2001:db8::/32']])
    const file = path.join(dir, 'state', 'blocklist.json')
    assert.deepEqual(JSON.parse(await fs.readFile(file, 'utf8')), { blocked: ['192.0.2.1', '2001:db8::/32'] })
    assert.deepEqual(await state.unblock(['192.0.2.1']), ['unblocked: 192.0.2.1'])
    assert.deepEqual(JSON.parse(await fs.readFile(file, 'utf8')), { blocked: ['2001:db8::/32'] })
    assert.deepEqual((await fs.readdir(path.join(dir, 'state'))), ['blocklist.json'], 'no temporary file left')
    const reloaded = new BlockState({ configFile: path.join(dir, 'config.json'), config: { stateDirectory: 'state' } }, () => {}, quietLog)
    assert.deepEqual(await reloaded.load(), ['2001:db8::/32'])
  })

  it('should keep blocks in memory only, and say so, without stateDirectory', async (t) => {
    const { dir, applied, state } = await setup(t, null)
    const lines = await state.block(['192.0.2.9'])
    assert.match(lines[1], /"stateDirectory" is not set/)
    assert.deepEqual(applied, [['192.0.2.9']])
    assert.deepEqual(await fs.readdir(dir), [])
  })

  it('should not unblock what only the configuration blocks', async (t) => {
    const { applied, state } = await setup(t, null)
    assert.match((await state.unblock(['203.0.113.5']))[0], /not blocked from the console/)
    assert.deepEqual(applied, [])
  })
})
