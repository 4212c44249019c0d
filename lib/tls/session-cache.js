'use strict'

const { LRUCache } = require('lru-cache')

// TLS 1.2 sessions kept for clients that resume by session id (without a
// ticket): as many as a busy site makes in a few minutes, for as long as
// Node keeps them itself (its sessionTimeout, 300 s).
const MAX_SESSIONS = 10000
const SESSION_TTL_MS = 300 * 1000
// A session id is at most 32 bytes; a serialized session a few hundred.
// (The field is `session`: `id` is the IPC request's own.)
const ID = /^[0-9a-f]{2,64}$/
const MAX_SESSION_CHARS = 16384
// A handshake waits at most this long for the coordinator; without an
// answer it goes on as a full one.
const FETCH_TIMEOUT_MS = 200

// Every TLS 1.3 client sends a random legacy session id (RFC 8446
// middlebox compatibility), which Node offers to 'resumeSession' like a real
// one, though TLS 1.3 never resumes by it. Asking the coordinator about each
// cost every new TLS connection a round trip to the primary. So each worker
// knows which ids the cache holds (the coordinator tells every worker of
// each one stored, and a new worker of all of them), and asks only for those.

/**
 * @returns {LRUCache<string, true>} the session ids a worker knows the
 *   coordinator's cache to hold, kept as long as the cache keeps them
 */
function knownSessionIds () {
  return new LRUCache({ max: MAX_SESSIONS, ttl: SESSION_TTL_MS })
}

/**
 * @param {LRUCache<string, true>} known a worker's knownSessionIds()
 * @param {*} ids from a 'tls-sessions-known' message
 */
function learnSessionIds (known, ids) {
  if (!Array.isArray(ids)) return
  for (const id of ids) if (typeof id === 'string' && ID.test(id)) known.set(id, true)
}

/**
 * The cluster's TLS session cache, kept by the coordinator: a session
 * made on one worker resumes on any other. Session tickets need none of
 * this (every worker has the same ticket keys, lib/tls/material.js); it
 * serves the clients that resume by session id.
 */
class TlsSessionCache {
  /**
   * @param {{broadcast: (act: string, fields: object) => void}} coordinator tells the workers
   */
  constructor (coordinator) {
    this.coordinator = coordinator
    this.sessions = new LRUCache({ max: MAX_SESSIONS, ttl: SESSION_TTL_MS })
  }

  /** @returns {string[]} the ids held, for a worker that starts */
  ids () {
    return [...this.sessions.keys()]
  }

  /** @returns {Object<string, Function>} the services */
  services () {
    return {
      'tls-session-store': (msg) => {
        if (typeof msg.session === 'string' && ID.test(msg.session) && typeof msg.data === 'string' && msg.data.length <= MAX_SESSION_CHARS) {
          this.sessions.set(msg.session, msg.data)
          this.coordinator.broadcast('tls-sessions-known', { sessions: [msg.session] })
        }
        return null
      },
      'tls-session-fetch': (msg) => {
        if (typeof msg.session !== 'string') return null
        const data = this.sessions.get(msg.session)
        return data === undefined ? null : data
      }
    }
  }
}

/**
 * Keep a secure server's new sessions in the coordinator's cache and look
 * up the ones clients offer there, when it holds them.
 * @param {import('node:tls').Server} server
 * @param {() => import('../ipc').Peer} coordinatorOf the coordinator client of the moment
 * @param {LRUCache<string, true>} known the worker's knownSessionIds()
 */
function shareSessions (server, coordinatorOf, known) {
  server.on('newSession', (id, data, done) => {
    const session = id.toString('hex')
    // This worker's next handshakes may offer it before the coordinator's word comes back.
    known.set(session, true)
    coordinatorOf().notify('tls-session-store', { session, data: data.toString('base64') })
    done()
  })
  server.on('resumeSession', (id, done) => {
    const session = id.toString('hex')
    if (!known.has(session)) {
      done(null, null)
      return
    }
    coordinatorOf().request('tls-session-fetch', { session }, { timeout: FETCH_TIMEOUT_MS }).then(
      (data) => done(null, typeof data === 'string' ? Buffer.from(data, 'base64') : null),
      () => done(null, null))
  })
}

module.exports = { TlsSessionCache, shareSessions, knownSessionIds, learnSessionIds }
