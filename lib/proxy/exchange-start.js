'use strict'

// What ties an exchange to the client's response: indexed by this symbol,
// the response's 'close' and 'drain' find their exchange without a closure
// per request.
const kExchange = Symbol('svr.proxyExchange')
// Why an exchange was aborted when the client's connection closed first.
const CLIENT_LEFT = new Error('the client closed the connection')

/**
 * Send an exchange's request to its first upstream; the client's response
 * closing aborts what is still waiting for the upstream.
 * @param {import('./forward').ProxyExchange} exchange
 */
function startExchange (exchange) {
  // The client may have left while an earlier stage worked (Basic auth's
  // hashing, a file lookup): its response's 'close' came already and never
  // comes again, so nothing would end an exchange started now, which would
  // hold an upstream connection for good.
  if (clientGone(exchange.res)) {
    exchange.abandon()
    return
  }
  exchange.res[kExchange] = exchange
  exchange.res.on('close', onResponseClose)
  exchange.attempt()
}

// The client's response closed: over, or the client went away. An
// exchange still waiting for or reading the upstream's answer is aborted.
function onResponseClose () {
  const exchange = this[kExchange]
  if (exchange.done) return
  exchange.clientGone = true
  if (exchange.queued) {
    exchange.route.queue.remove(exchange)
    // Through abandon(): a caching exchange's fill ends with it.
    exchange.abandon()
    return
  }
  if (exchange.answered) exchange.settle(CLIENT_LEFT)
  if (exchange.controller !== null) exchange.controller.abort(CLIENT_LEFT)
}

/**
 * @param {object} res Node's HTTP/1 or HTTP/2 compatibility response
 * @returns {boolean} whether its client is gone (HTTP/2's response has no `destroyed` of its own)
 */
function clientGone (res) {
  return res.destroyed === true || (res.stream !== undefined && res.stream.destroyed === true)
}

// The client's response drained: the upstream's answer may flow again.
function resumeUpstream () {
  const exchange = this[kExchange]
  if (!exchange.done) exchange.controller.resume()
}

module.exports = { startExchange, resumeUpstream, CLIENT_LEFT }
