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

/**
 * The cluster's TLS session cache, kept by the coordinator: a session
 * made on one worker resumes on any other. Session tickets need none of
 * this (every worker has the same ticket keys, lib/tls/material.js); it
 * serves the clients that resume by session id.
 * @param {import('../coordinator').Coordinator} coordinator
 * @returns {Object<string, Function>} the services
 */
function tlsSessionServices (coordinator) {
  const sessions = new LRUCache({ max: MAX_SESSIONS, ttl: SESSION_TTL_MS })
  return {
    'tls-session-store' (msg) {
      if (typeof msg.session === 'string' && ID.test(msg.session) && typeof msg.data === 'string' && msg.data.length <= MAX_SESSION_CHARS) {
        sessions.set(msg.session, msg.data)
      }
      return null
    },
    'tls-session-fetch' (msg) {
      if (typeof msg.session !== 'string') return null
      const data = sessions.get(msg.session)
      return data === undefined ? null : data
    }
  }
}

/**
 * Keep a secure server's new sessions in the coordinator's cache and look
 * up the ones clients offer there.
 * @param {import('node:tls').Server} server
 * @param {() => import('../ipc').Peer} coordinatorOf the coordinator client of the moment
 */
function shareSessions (server, coordinatorOf) {
  server.on('newSession', (id, data, done) => {
    coordinatorOf().notify('tls-session-store', { session: id.toString('hex'), data: data.toString('base64') })
    done()
  })
  server.on('resumeSession', (id, done) => {
    coordinatorOf().request('tls-session-fetch', { session: id.toString('hex') }, { timeout: FETCH_TIMEOUT_MS }).then(
      (data) => done(null, typeof data === 'string' ? Buffer.from(data, 'base64') : null),
      () => done(null, null))
  })
}

module.exports = { tlsSessionServices, shareSessions }
