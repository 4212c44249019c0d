'use strict'

const net = require('node:net')
const proxyaddr = require('proxy-addr')
const { compileAddressList } = require('./address-list')
const { normalizeAddress } = require('../hosts/vhost')

const MAPPED_PREFIX = '::ffff:'
// Some proxies write a hop with its port ("192.0.2.1:4711",
// "[2001:db8::1]:4711") or bracket IPv6 without one.
const HOP_WITH_PORT = /^(?:\[([^\]]+)\]|([^:]+))(?::\d{1,5})?$/

// One resolver per loaded configuration: a reload brings a new frozen
// config object, and the old resolver goes with it.
const resolvers = new WeakMap()

/**
 * The client behind trusted reverse proxies (SVR.JS believed the leftmost
 * X-Forwarded-For entry from any peer, so any client chose its address). Only a
 * connection whose peer is in `trustedProxies` has its `X-Forwarded-For`
 * believed; the header is walked from right to left past further trusted
 * hops, and the first untrusted hop is the client. Nothing a client sends
 * from an untrusted address changes its address. `Forwarded` (RFC 7239) is
 * not read: a proxy that maintains only one of the two headers passes the
 * other through unchanged from the client, so believing both would let the
 * client choose its address again.
 * @param {object} config the loaded configuration
 * @returns {((address: string) => boolean) | null} whether an address is a
 *   trusted proxy; null when forwarding headers are never believed
 */
function compileForwarding (config) {
  if (!config.enableIPSpoofing) return null
  const isTrusted = compileAddressList(config.trustedProxies)
  if (isTrusted === null) return null
  // A Unix-socket peer has no address: "localhost" covers it, since the
  // socket file's permissions already restrict it to local users (as for
  // statusAllow). Header entries are never empty, so only the peer can be.
  const trustsSocketFile = config.trustedProxies.includes('localhost')
  // Also proxy-addr's trust callback: it gets each hop as written, and a hop
  // that is not an IP address is never trusted, which ends the walk there.
  return function isTrustedHop (hop) {
    if (hop === undefined || hop === '') return trustsSocketFile
    const address = hopAddress(hop)
    return address !== null && isTrusted(address)
  }
}

/**
 * @param {string} hop an X-Forwarded-For entry or the socket peer
 * @returns {string|null} its IP address without port or brackets, or null
 */
function hopAddress (hop) {
  if (net.isIP(hop) !== 0) return hop
  const match = HOP_WITH_PORT.exec(hop)
  if (match === null) return null
  const address = match[1] === undefined ? match[2] : match[1]
  return net.isIP(address) === 0 ? null : address
}

/**
 * @param {object} config
 * @returns {ReturnType<compileForwarding>} compiled once per configuration
 */
function forwardingFor (config) {
  let forwarding = resolvers.get(config)
  if (forwarding === undefined) {
    forwarding = compileForwarding(config)
    resolvers.set(config, forwarding)
  }
  return forwarding
}

/**
 * Set `ctx.clientAddress` and `ctx.fromTrustedProxy` for a request whose
 * configuration has `enableIPSpoofing` on. For a trusted peer, mods and the
 * script also see the SVR.JS socket fields `realRemoteAddress`,
 * `realRemotePort` (null), `originalRemoteAddress` and `originalRemotePort`;
 * they are set on every request of such a connection, so a keep-alive
 * request without the header does not inherit the previous one's client.
 * @param {object} ctx a fresh request context (clientAddress = the peer)
 * @param {import('node:http').IncomingMessage} req
 */
function resolveClientAddress (ctx, req) {
  const isTrusted = forwardingFor(ctx.config)
  if (isTrusted === null || !isTrusted(ctx.clientAddress)) return
  ctx.fromTrustedProxy = true
  const hops = proxyaddr.all(req, isTrusted)
  const client = clientOf(hops)
  ctx.clientAddress = normalizeAddress(client)
  const socket = req.socket
  socket.originalRemoteAddress = socket.remoteAddress
  socket.originalRemotePort = socket.remotePort
  socket.realRemoteAddress = socketForm(client, socket.remoteAddress)
  socket.realRemotePort = null
}

/**
 * @param {string[]} hops the peer, then the forwarded hops from right to
 *   left, up to and including the first untrusted one
 * @returns {string} the address of the last hop that has one: an entry
 *   that is not an address (a typo, "unknown", an obfuscated name) leaves
 *   the client at the trusted hop that passed it on rather than failing
 *   the request
 */
function clientOf (hops) {
  for (let i = hops.length - 1; i > 0; i--) {
    const address = hopAddress(hops[i])
    if (address !== null) return address
  }
  return hops[0] === undefined ? '' : hops[0]
}

/**
 * The addresses a request passed through, from the client to the peer,
 * for the forwarding headers a proxy route sends on: only the hops the
 * trustedProxies chain vouches for, so entries a client wrote into its own
 * X-Forwarded-For never go further.
 * @param {object} ctx the request context (clientAddress and fromTrustedProxy set)
 * @param {import('node:http').IncomingMessage} req
 * @returns {string[]} normalized addresses, the client first; empty for a
 *   Unix-socket peer without a forwarded client
 */
function forwardingChain (ctx, req) {
  if (!ctx.fromTrustedProxy) return ctx.clientAddress === '' ? [] : [ctx.clientAddress]
  const hops = proxyaddr.all(req, forwardingFor(ctx.config))
  const chain = []
  for (let i = hops.length - 1; i >= 0; i--) {
    const address = hopAddress(hops[i])
    if (address !== null) chain.push(normalizeAddress(address))
  }
  return chain
}

// SVR.JS wrote an IPv4 client in the socket's own IPv6 form.
function socketForm (client, peer) {
  if (net.isIPv4(client) && typeof peer === 'string' && peer.startsWith(MAPPED_PREFIX)) return MAPPED_PREFIX + client
  return client
}

/**
 * The one boot-time warning about a setting that does nothing.
 * @param {object} config
 * @param {{warn: Function}} log
 * @returns {boolean} whether it warned
 */
function warnForwardingConfig (config, log) {
  if (!config.enableIPSpoofing || config.trustedProxies.length !== 0) return false
  log.warn('enableIPSpoofing has no effect without trustedProxies: X-Forwarded-For is ignored')
  return true
}

module.exports = { resolveClientAddress, forwardingChain, compileForwarding, clientOf, hopAddress, warnForwardingConfig }
