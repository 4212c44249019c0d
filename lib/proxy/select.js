'use strict'

// select()'s answer when every upstream a request may go to is at its
// connection limit: the request waits in the route's queue.
const FULL = Symbol('every usable upstream is at its connection limit')

/**
 * The member of a route a request goes to next, as nginx's upstream
 * module picks a peer:
 * - the primaries (not `backup`) that are up and not tried yet for this
 *   request, by the route's policy;
 * - when none is, the backups that are;
 * - when none of either is up at all, every untried member, primaries
 *   first ("half-open"): an application that came back answers the next
 *   request, not the first one after a timer. A route's lone upstream is
 *   always tried this way, whatever health says.
 * Within the first tier that has candidates, a member at its connection
 * limit is skipped; when all are, the answer is FULL.
 * @param {object} route a compiled route (lib/proxy/routes.js)
 * @param {Set<import('./member').Member>|null} tried
 * @param {number|string|null} key the policy's key for this request
 * @param {number} now ms
 * @returns {import('./member').Member|null|typeof FULL} null: nothing left to try
 */
function select (route, tried, key, now) {
  const { members } = route
  if (members.length === 1) {
    const only = members[0]
    if (tried !== null && tried.has(only)) return null
    return only.hasRoom() ? only : FULL
  }
  return pickFrom(route, tried, key, now, true) ?? pickFrom(route, tried, key, now, false)
}

/**
 * @param {boolean} upOnly false: the half-open pass over members that are out
 * @returns {import('./member').Member|null|typeof FULL} null: no tier had an untried member
 */
function pickFrom (route, tried, key, now, upOnly) {
  for (const tier of route.tiers) {
    let candidates = null
    let full = false
    for (const member of tier) {
      if ((upOnly && !member.upstream.isUp(now)) || (tried !== null && tried.has(member))) continue
      if (!member.hasRoom()) {
        full = true
        continue
      }
      if (candidates === null) candidates = [member]
      else candidates.push(member)
    }
    if (candidates !== null) return candidates.length === 1 ? candidates[0] : route.pick(candidates, key, now)
    if (full) return FULL
  }
  return null
}

/**
 * @param {object} route
 * @param {number} now
 * @returns {boolean} whether health has every member of the route out
 */
function allOut (route, now) {
  for (const member of route.members) if (member.upstream.isUp(now)) return false
  return true
}

module.exports = { select, allOut, FULL }
