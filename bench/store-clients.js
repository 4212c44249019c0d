#!/usr/bin/env node
'use strict'

// How much CPU each Redis client of Node costs svr per command, the
// measurement behind choosing ioredis for `store` (docs/fleet.md). One
// Lua call per operation (what the fleet's throttle sends), one at a time
// and 200 at once, against a redis-server started here on loopback.
// The candidates other than ioredis are not dependencies:
//   npm install --no-save iovalkey @redis/client && node bench/store-clients.js

const { spawn } = require('node:child_process')
const { freePort, which } = require('../test/helpers/tools')

const SCRIPT = "local v = redis.call('INCRBY', KEYS[1], ARGV[1]) redis.call('PEXPIRE', KEYS[1], 60000) return v"
const ROUNDS = 2
const SEQUENTIAL = 20000
const BATCHES = 200
const PER_BATCH = 200

const CANDIDATES = {
  ioredis: (port) => ioredisLike(require('ioredis'), port),
  iovalkey: (port) => ioredisLike(require('iovalkey'), port),
  '@redis/client': async (port) => {
    const { createClient, defineScript } = require('@redis/client')
    const bump = defineScript({
      NUMBER_OF_KEYS: 1,
      SCRIPT,
      parseCommand (parser, key, n) {
        parser.pushKey(key)
        parser.push(String(n))
      },
      transformReply: (reply) => reply
    })
    const client = createClient({ socket: { port, host: '127.0.0.1' }, scripts: { bump } })
    await client.connect()
    return { bump: (key) => client.bump(key, 1), close: () => client.quit() }
  }
}

async function ioredisLike (Redis, port) {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true })
  await client.connect()
  client.defineCommand('bump', { numberOfKeys: 1, lua: SCRIPT })
  return { bump: (key) => client.bump(key, 1), close: () => client.disconnect() }
}

function cpuMicros (since) {
  const used = process.cpuUsage(since)
  return used.user + used.system
}

async function measure (client) {
  for (let i = 0; i < 2000; i++) await client.bump('k' + (i % 100))
  let cpu = process.cpuUsage()
  for (let i = 0; i < SEQUENTIAL; i++) await client.bump('k' + (i % 100))
  const sequential = cpuMicros(cpu) / SEQUENTIAL
  cpu = process.cpuUsage()
  for (let b = 0; b < BATCHES; b++) await Promise.all(Array.from({ length: PER_BATCH }, (_, i) => client.bump('k' + (i % 100))))
  const concurrent = cpuMicros(cpu) / (BATCHES * PER_BATCH)
  return { sequential, concurrent }
}

async function main () {
  if (which('redis-server') === null) throw new Error('needs redis-server (apt-get install -y redis-server)')
  const port = await freePort()
  const server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  try {
    await new Promise((resolve) => setTimeout(resolve, 300))
    console.log('client CPU per command (µs), lower is better; ' + require('node:os').cpus()[0].model)
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, open] of Object.entries(CANDIDATES)) {
        let client
        try {
          client = await open(port)
        } catch (err) {
          if (err.code !== 'MODULE_NOT_FOUND') throw err
          console.log(name.padEnd(14) + ' not installed (npm install --no-save ' + name + ')')
          continue
        }
        const { sequential, concurrent } = await measure(client)
        await client.close()
        console.log(`round ${round} ${name.padEnd(14)} one at a time ${sequential.toFixed(1).padStart(5)}   200 at once ${concurrent.toFixed(1).padStart(5)}`)
      }
    }
  } finally {
    server.kill()
  }
}

main().catch((err) => {
  console.error(err.message)
  process.exitCode = 1
})
