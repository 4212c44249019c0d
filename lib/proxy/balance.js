'use strict'

const { mixHashes } = require('./hash')

/**
 * Load-balancing policies of a proxy route. Each is made once per route and
 * picks among the route's members that are up, untried for this request and
 * under their connection limit, weighing each by its weight (a recovering
 * one by less, under slowStart: Member#weightAt).
 * @callback Pick
 * @param {import('./member').Member[]} candidates in configuration order; not empty
 * @param {number|string|null} key what the policy keys on, worked out once per
 *   request (keyOf): the client's hash for client-hash, the cookie's value for cookie
 * @param {number} now ms
 * @returns {import('./member').Member}
 */

/**
 * @param {'round-robin'|'least-connections'|'client-hash'|'random-two'|'cookie'} policy
 * @returns {Pick}
 */
function createPolicy (policy) {
  switch (policy) {
    case 'least-connections': return leastConnections()
    case 'client-hash': return rendezvous
    case 'random-two': return randomTwo
    case 'cookie': return byCookie(smoothRoundRobin())
    default: return smoothRoundRobin()
  }
}

// Each upstream in turn, as often as its weight says, spread out rather
// than in runs (nginx's smooth weighted round-robin: weights 5, 1, 1 give
// a a b a c a a, not a a a a a b c). Every pick adds each candidate's
// weight to its credit and takes the largest, which pays the total back;
// equal weights give plain turns.
function smoothRoundRobin () {
  return function pickInTurn (candidates, key, now) {
    let best = null
    let total = 0
    for (const member of candidates) {
      const weight = member.weightAt(now)
      member.credit += weight
      total += weight
      if (best === null || member.credit > best.credit) best = member
    }
    best.credit -= total
    return best
  }
}

// Fewest requests in flight from this worker for its weight; among
// equals, by smooth weighted round-robin (as nginx's least_conn), so that
// an idle set of upstreams shares requests by weight, not all to the first.
function leastConnections () {
  const inTurn = smoothRoundRobin()
  return function pickLeastBusy (candidates, key, now) {
    let least = Infinity
    let tied = null
    for (const member of candidates) {
      const load = member.upstream.inFlight / member.weightAt(now)
      if (load < least) {
        least = load
        tied = [member]
      } else if (load === least) {
        tied.push(member)
      }
    }
    return tied.length === 1 ? tied[0] : inTurn(tied, key, now)
  }
}

// Rendezvous (highest random weight) hashing: each upstream scores the
// client by a hash of both, and the highest score wins. An upstream that
// leaves takes only its own clients with it: everyone else's highest score
// is where it was. Weighted as in Schindelhauer and Schomaker's logarithmic
// method: score = weight / -ln(u), u uniform in (0, 1) from the hash.
function rendezvous (candidates, clientHash, now) {
  let best = candidates[0]
  let bestScore = -Infinity
  for (const member of candidates) {
    const u = (mixHashes(clientHash, member.seed) + 0.5) / 4294967296
    const score = member.weightAt(now) / -Math.log(u)
    if (score > bestScore) {
      bestScore = score
      best = member
    }
  }
  return best
}

// Two upstreams drawn by weight, and the less busy of them for its weight
// ("the power of two choices": nearly as even as least-connections,
// without its herding when many workers see the same counts).
function randomTwo (candidates, key, now) {
  if (candidates.length === 1) return candidates[0]
  const a = drawByWeight(candidates, null, now)
  const b = drawByWeight(candidates, a, now)
  return b.upstream.inFlight / b.weightAt(now) < a.upstream.inFlight / a.weightAt(now) ? b : a
}

function drawByWeight (candidates, except, now) {
  let total = 0
  for (const member of candidates) if (member !== except) total += member.weightAt(now)
  let point = Math.random() * total
  let last = null
  for (const member of candidates) {
    if (member === except) continue
    last = member
    point -= member.weightAt(now)
    if (point < 0) return member
  }
  return last
}

// The upstream the client's cookie names, while it may be picked; a new
// client (or one whose upstream is out) gets one by `fallback` and a cookie
// naming it (lib/proxy/sticky-cookie.js).
function byCookie (fallback) {
  return function pickByCookie (candidates, cookieValue, now) {
    if (cookieValue !== null) {
      for (const member of candidates) if (member.id === cookieValue) return member
    }
    return fallback(candidates, cookieValue, now)
  }
}

module.exports = { createPolicy }
