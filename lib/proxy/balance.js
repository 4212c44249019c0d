'use strict'

/**
 * Load-balancing policies of a proxy route. Each is made once per route and
 * picks among the upstreams that are up and not tried yet for this request;
 * null when there is none.
 * @callback Pick
 * @param {import('./upstream').Upstream[]} candidates up, untried, in configuration order; not empty
 * @param {string} client the client address (ctx.clientAddress)
 * @returns {import('./upstream').Upstream}
 */

/**
 * @param {'round-robin'|'least-connections'|'client-hash'|'random-two'} policy
 * @returns {Pick}
 */
function createPolicy (policy) {
  switch (policy) {
    case 'least-connections': return leastConnections()
    case 'client-hash': return clientHash
    case 'random-two': return randomTwo
    default: return roundRobin()
  }
}

// Each upstream in turn. The counter runs over the candidates of the
// moment, so an upstream that is out shifts the turn to the next one.
function roundRobin () {
  let turn = 0
  return function pickInTurn (candidates) {
    const upstream = candidates[turn % candidates.length]
    turn = (turn + 1) % 0x40000000
    return upstream
  }
}

// Fewest requests in flight from this worker; among equals, in turn, so
// that an idle set of upstreams is not all sent to the first one.
function leastConnections () {
  let turn = 0
  return function pickLeastBusy (candidates) {
    let least = Infinity
    let ties = 0
    for (const upstream of candidates) {
      if (upstream.inFlight < least) {
        least = upstream.inFlight
        ties = 1
      } else if (upstream.inFlight === least) {
        ties++
      }
    }
    let skip = turn % ties
    turn = (turn + 1) % 0x40000000
    for (const upstream of candidates) {
      if (upstream.inFlight === least && skip-- === 0) return upstream
    }
    return candidates[0]
  }
}

// The same client address gets the same upstream while the set of healthy
// upstreams stays the same (FNV-1a over the address).
function clientHash (candidates, client) {
  return candidates[hashString(client) % candidates.length]
}

/**
 * @param {string} text
 * @returns {number} 32-bit FNV-1a hash
 */
function hashString (text) {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}

// Two upstreams at random, and the less busy of them ("the power of two
// choices": nearly as even as least-connections, without its herding when
// many workers see the same counts).
function randomTwo (candidates) {
  if (candidates.length === 1) return candidates[0]
  const first = Math.floor(Math.random() * candidates.length)
  let second = Math.floor(Math.random() * (candidates.length - 1))
  if (second >= first) second++
  const a = candidates[first]
  const b = candidates[second]
  return b.inFlight < a.inFlight ? b : a
}

module.exports = { createPolicy, hashString }
