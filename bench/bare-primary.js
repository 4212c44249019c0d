'use strict'

// The primary of the bare Node baselines (bench/bare-cluster.js,
// bare-proxy.js, bare-replay.js): the least a cluster's primary does.

const cluster = require('node:cluster')

/**
 * Fork `count` workers, say `listening on URL` once all of them listen,
 * and on SIGTERM stop them and wait for them: workers that exit by
 * themselves write their --cpu-prof profiles, a worker killed by a signal
 * would not.
 * @param {number} count
 * @param {object|undefined} env for cluster.fork
 * @param {string} url what the line announces, e.g. http://127.0.0.1:8080
 */
function forkBareWorkers (count, env, url) {
  let ready = 0
  for (let i = 0; i < count; i++) {
    cluster.fork(env).on('listening', () => {
      if (++ready === count) console.log('listening on ' + url)
    })
  }
  process.on('SIGTERM', () => {
    let left = Object.keys(cluster.workers).length
    if (left === 0) process.exit(0)
    for (const worker of Object.values(cluster.workers)) {
      worker.once('exit', () => { if (--left === 0) process.exit(0) })
      worker.process.kill('SIGTERM')
    }
  })
}

module.exports = { forkBareWorkers }
