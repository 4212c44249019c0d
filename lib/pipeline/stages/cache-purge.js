'use strict'

const { isLocalClient } = require('../../access/address-list')
const { connectionOf, socketAddresses } = require('../../hosts/vhost')
const { requestPurge } = require('../../cache/purge-target')
const { caches } = require('../../cache/config')

// The primary removes the files before it answers: a purge of many entries takes a while.
const PURGE_TIMEOUT_MS = 10000

/**
 * `PURGE /path` (`responseCache.allowPurge`), as Squid, Varnish and nginx's
 * cache_purge take it: the cached answers of that URL of the request's host
 * go, or of every URL under it for a path ending in `*`; the primary
 * removes them for the whole server and says how many. Only this machine
 * may purge; anyone else gets 403. It runs once the URL is final (after
 * sanitizing and rewriting, as the proxy routes key their entries) and
 * before the visitors' access rules, which are not the operator's.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {((req, res, ctx) => boolean | Promise<boolean>) | null} null
 *   unless something caches (a proxy route or a `cache` rule) and `allowPurge` is on
 */
function createCachePurgeStage (options, shared) {
  const { config } = options
  if (!config.responseCache.allowPurge || !caches(config)) return null
  const { respond, log, runtime } = shared
  return function purgeCache (req, res, ctx) {
    if (req.method !== 'PURGE') return false
    if (!fromThisMachine(socketAddresses(connectionOf(req)).remote, ctx.clientAddress)) {
      respond.sendError(ctx, 403)
      return true
    }
    const { base, prefix } = requestPurge(ctx.hostname, ctx.pathname + ctx.search)
    return runtime.coordinator.request('cache-purge', { base, prefix }, { timeout: PURGE_TIMEOUT_MS }).then((count) => {
      sendPurged(res, Number.isInteger(count) ? count : 0)
      return true
    }, (err) => {
      log.warn('response cache: purge of ' + base + (prefix ? '*' : '') + ' failed: ' + err.message)
      respond.sendError(ctx, 503)
      return true
    })
  }
}

/**
 * Whether a PURGE comes from this machine. The connection's peer decides,
 * which no header can change: a loopback address (IPv4-mapped included) or
 * a Unix socket. When that peer is a trusted proxy, the client it forwards
 * for must be local too: a reverse proxy on this machine relays everyone's
 * requests from loopback.
 * @param {string} peer the socket's remote address, normalized ('' for a Unix socket)
 * @param {string} client ctx.clientAddress (the peer, or the forwarded client)
 * @returns {boolean}
 */
function fromThisMachine (peer, client) {
  return isLocalClient(peer) && isLocalClient(client)
}

function sendPurged (res, count) {
  if (res.headersSent || res.destroyed) return
  const body = count + ' cached answer' + (count === 1 ? '' : 's') + ' removed\n'
  res.statusCode = 200
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(body))
  res.setHeader('Cache-Control', 'no-store')
  res.end(body)
}

module.exports = { createCachePurgeStage, fromThisMachine }
