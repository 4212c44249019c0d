'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { EventEmitter } = require('node:events')
const { TlsSessionCache, shareSessions, knownSessionIds, learnSessionIds } = require('../../lib/tls/session-cache')

function cacheWithBroadcasts () {
  const broadcasts = []
  const cache = new TlsSessionCache({ broadcast: (act, fields) => broadcasts.push({ act, ...fields }) })
  return { services: cache.services(), cache, broadcasts }
}

describe('the cluster TLS session cache', () => {
  it('should give back a stored session by its id, null for others, and tell every worker the id', () => {
    const { services, cache, broadcasts } = cacheWithBroadcasts()
    services['tls-session-store']({ session: 'ab01', data: 'c2Vzc2lvbg==' })
    assert.equal(services['tls-session-fetch']({ session: 'ab01', id: 7 }), 'c2Vzc2lvbg==')
    assert.equal(services['tls-session-fetch']({ session: 'ab02', id: 8 }), null)
    assert.deepEqual(broadcasts, [{ act: 'tls-sessions-known', sessions: ['ab01'] }])
    assert.deepEqual(cache.ids(), ['ab01'])
  })

  it('should ignore malformed messages instead of throwing', () => {
    const { services, broadcasts } = cacheWithBroadcasts()
    for (const msg of [{}, { session: 5, data: 'x' }, { session: 'not hex', data: 'x' }, { session: 'ab', data: 7 },
      { session: 'ab', data: 'x'.repeat(20000) }, { session: 'a'.repeat(66), data: 'x' }]) {
      assert.equal(services['tls-session-store'](msg), null)
    }
    assert.equal(services['tls-session-fetch']({ session: 'ab' }), null)
    assert.equal(services['tls-session-fetch']({ session: 'a'.repeat(66) }), null)
    assert.equal(services['tls-session-fetch']({}), null)
    assert.deepEqual(broadcasts, [])
  })
})

describe('shareSessions(server, coordinatorOf, known)', () => {
  function setup () {
    const server = new EventEmitter()
    const asked = []
    const coordinator = {
      notify: (act, fields) => asked.push({ act, ...fields }),
      request: (act, fields) => {
        asked.push({ act, ...fields })
        return Promise.resolve(Buffer.from('data').toString('base64'))
      }
    }
    const known = knownSessionIds()
    shareSessions(server, () => coordinator, known)
    return { server, asked, known }
  }

  it('should answer an id the cache does not hold at once, without asking the coordinator (a TLS 1.3 legacy session id)', () => {
    const { server, asked } = setup()
    const answers = []
    server.emit('resumeSession', Buffer.from('0123', 'hex'), (err, data) => answers.push([err, data]))
    assert.deepEqual(answers, [[null, null]])
    assert.deepEqual(asked, [])
  })

  it('should fetch an id the coordinator said it holds, and one this worker stored itself', async () => {
    const { server, asked, known } = setup()
    learnSessionIds(known, ['0123', 'not hex', 5])
    assert.equal(known.size, 1)
    server.emit('newSession', Buffer.from('abcd', 'hex'), Buffer.from('s'), () => {})
    const fetched = []
    for (const id of ['0123', 'abcd']) {
      fetched.push(await new Promise((resolve) => server.emit('resumeSession', Buffer.from(id, 'hex'), (err, data) => resolve([err, String(data)]))))
    }
    assert.deepEqual(fetched, [[null, 'data'], [null, 'data']])
    assert.deepEqual(asked.map((m) => m.act + ' ' + m.session), ['tls-session-store abcd', 'tls-session-fetch 0123', 'tls-session-fetch abcd'])
  })
})
