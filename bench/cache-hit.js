'use strict'

// The check of a cache-hit row before it is timed: a rate measured on
// answers that are not hits (a route without `cache`, an answer the policy
// refuses to store, an entry already expired) would be a proxy's rate
// under the cache's name, so such a row fails instead of being reported.

const http = require('node:http')

const HIT = 'svr; hit'
// Requests on fresh connections after the entry is filled; the kernel
// deals them to either worker, and each must find the entry.
const CHECKS = 6
// The request that fills an entry is answered as the entry is written:
// the next one may still find none for a moment.
const FILL_TIMEOUT_MS = 5000
const FILL_RETRY_MS = 20

/**
 * Fill the row's entry, then require that every answer of a few fresh
 * connections is a 200 hit.
 * @param {{name: string, port: number}} target
 * @param {{name: string, target: string}} workload
 * @param {{checks?: number, fillTimeoutMs?: number}} [opts]
 * @returns {Promise<void>} rejects, saying what was answered, when an answer is no hit
 */
async function expectCacheHits (target, workload, { checks = CHECKS, fillTimeoutMs = FILL_TIMEOUT_MS } = {}) {
  await waitForHit(target, workload, fillTimeoutMs)
  for (let i = 0; i < checks; i++) {
    const answer = await get(target.port, workload.target)
    if (!isHit(answer)) throw notHit(target, workload, answer, `request ${i + 1} of ${checks} after the entry was filled`)
  }
}

async function waitForHit (target, workload, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  let answer = await get(target.port, workload.target)
  while (!isHit(answer)) {
    if (Date.now() >= deadline) throw notHit(target, workload, answer, `still after ${timeoutMs} ms of requests`)
    await new Promise((resolve) => setTimeout(resolve, FILL_RETRY_MS))
    answer = await get(target.port, workload.target)
  }
}

function isHit (answer) {
  return answer.status === 200 && answer.cacheStatus === HIT
}

function notHit (target, workload, answer, when) {
  return new Error(`${workload.name}: ${target.name} answered ${workload.target} with ${answer.status} and ` +
    `Cache-Status ${answer.cacheStatus === undefined ? '(none)' : JSON.stringify(answer.cacheStatus)} (${when}), ` +
    `not with a hit ("${HIT}"): the row would not measure the response cache, so it is not measured`)
}

function get (port, target) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve({ status: res.statusCode, cacheStatus: res.headers['cache-status'] }))
    })
    req.on('error', reject)
  })
}

module.exports = { expectCacheHits }
