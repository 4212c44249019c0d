'use strict'

// TLS session tickets of a fleet: one instance's ticket resumes the session
// on another when they share a store (the ticket keys are the fleet's).

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const tls = require('node:tls')
const { makeSite, startSvr } = require('../helpers/server')
const { makeCertificate } = require('../helpers/tls')
const { freePort, skipWithout, requireTools } = require('../helpers/tools')
const { startRedis } = require('../helpers/redis')
const { PERIOD_MS } = require('../../lib/tls/fleet-ticket-keys')
const { PREFIX } = require('../../lib/store/sealing')

const PASSWORD = 'ticket-store-' + crypto.randomBytes(4).toString('hex')

/**
 * One TLS connection with a request on it, offering `session`.
 * @returns {Promise<{reused: boolean, session: Buffer}>}
 */
function connect (port, maxVersion, session) {
  return new Promise((resolve, reject) => {
    let ticket = null
    const socket = tls.connect({
      host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false, minVersion: maxVersion, maxVersion, session, ALPNProtocols: ['http/1.1']
    }, () => socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'))
    socket.on('session', (data) => { ticket = data })
    socket.resume()
    socket.on('end', () => resolve({ reused: socket.isSessionReused(), session: ticket || socket.getSession() }))
    socket.on('error', reject)
    socket.setTimeout(10000, () => socket.destroy(new Error('no answer over TLS')))
  })
}

async function secureInstance (t, redis, cert, storeKey = null) {
  const port = await freePort()
  const site = await makeSite(t, {
    workers: 2,
    secure: true,
    sport: '127.0.0.1:' + port,
    disableNonEncryptedServer: true,
    cert: cert.cert,
    key: cert.key,
    store: redis === null ? null : { url: redis.url, passwordFile: 'store-password', keyFile: storeKey === null ? null : 'store.key' }
  })
  if (redis !== null) await fs.writeFile(path.join(site.dir, 'store-password'), redis.password + '\n')
  if (storeKey !== null) await fs.writeFile(path.join(site.dir, 'store.key'), storeKey.toString('hex') + '\n', { mode: 0o600 })
  const svr = await startSvr(t, site.configFile)
  return { port, svr }
}

// Each instance's workers take the keys a moment after the primary logged them.
async function resumedOn (port, maxVersion, session) {
  for (let tries = 0; tries < 20; tries++) {
    if ((await connect(port, maxVersion, session)).reused) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return false
}

describe('TLS session tickets over a fleet', { skip: skipWithout('redis-server') }, () => {
  it('resumes a session of one instance on the other, TLS 1.3 and 1.2, with a store; not without', async (t) => {
    requireTools(t, 'redis-server')
    const redis = await startRedis(t, { password: PASSWORD })
    const dir = await fs.mkdtemp(path.join(require('node:os').tmpdir(), 'svr-cert-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const cert = await makeCertificate(dir, 'shared')
    // The keys go to the store encrypted with store.keyFile, for their period only.
    const storeKey = crypto.randomBytes(32)
    const fleet = [await secureInstance(t, redis, cert, storeKey), await secureInstance(t, redis, cert, storeKey)]
    for (const { svr } of fleet) await svr.waitFor(/TLS session tickets: the fleet's keys of this period/)
    const [a, b] = fleet.map((instance) => instance.port)
    const name = 'svr:tls:ticket-keys:' + Math.floor(Date.now() / PERIOD_MS)
    assert.match(await redis.command(['AUTH ' + PASSWORD, 'GET ' + name]), new RegExp('^\\+OK\\r\\n\\$\\d+\\r\\n' + PREFIX))
    const ttl = Number(/\r\n:(\d+)\r\n/.exec(await redis.command(['AUTH ' + PASSWORD, 'PTTL ' + name]))[1])
    assert.ok(ttl > 0 && ttl <= PERIOD_MS + 2 * 60 * 1000, 'expires with its period: ' + ttl + ' ms')
    // An instance with another key uses its own keys, and says why.
    const other = await secureInstance(t, redis, cert, crypto.randomBytes(32))
    await other.svr.waitFor(/TLS session tickets: the fleet's keys in the store cannot be used \(it does not open with the key of "store\.keyFile"/)
    for (const version of ['TLSv1.3', 'TLSv1.2']) {
      const first = await connect(a, version)
      assert.equal(first.reused, false)
      assert.equal(await resumedOn(b, version, first.session), true, version + ': A\'s ticket resumes on B')
      assert.equal((await connect(other.port, version, first.session)).reused, false, version + ': not on the instance with another key')
    }
    // B's workers after a reload have the fleet's keys too.
    const mark = fleet[1].svr.output.length
    fleet[1].svr.signal('SIGHUP')
    await fleet[1].svr.waitFor(/reload applied/, 20000, mark)
    const again = await connect(a, 'TLSv1.3')
    assert.equal(await resumedOn(b, 'TLSv1.3', again.session), true, 'A\'s ticket resumes on B after B\'s reload')
    // Two instances without a store: each has its own keys.
    const c = (await secureInstance(t, null, cert)).port
    const d = (await secureInstance(t, null, cert)).port
    const alone = await connect(c, 'TLSv1.3')
    assert.equal((await connect(d, 'TLSv1.3', alone.session)).reused, false)
  })
})
