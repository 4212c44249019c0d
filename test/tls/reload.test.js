'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const { makeSite, startSvr } = require('../helpers/server')
const { makeCertificate, httpsRequest } = require('../helpers/tls')

/**
 * HTTPS requests on new connections, one after the other, until stopped.
 * @returns {{seen: string[], errors: string[], stop: () => Promise<void>}}
 */
function handshakeLoop (port) {
  const seen = []
  const errors = []
  let running = true
  const done = (async () => {
    while (running) {
      try {
        const res = await httpsRequest(port, '/')
        if (res.status !== 200) errors.push('status ' + res.status)
        seen.push(res.fingerprint)
      } catch (err) {
        errors.push(err.code || err.message)
      }
    }
  })()
  return { seen, errors, stop: async () => { running = false; await done } }
}

describe('certificate reload', () => {
  it('should serve new certificate files after SIGHUP without a failed request', async (t) => {
    const site = await makeSite(t)
    const first = await makeCertificate(site.dir, 'first')
    const second = await makeCertificate(site.dir, 'second')
    const live = { cert: site.dir + '/live.crt', key: site.dir + '/live.key' }
    await fs.copyFile(first.cert, live.cert)
    await fs.copyFile(first.key, live.key)
    await site.writeConfig({ workers: 2, secure: true, sport: '127.0.0.1:0', disableNonEncryptedServer: true, ...live })
    const svr = await startSvr(t, site.configFile)

    const loop = handshakeLoop(svr.port)
    await new Promise((resolve) => setTimeout(resolve, 300))
    // A broken certificate refuses the reload; the old one stays in use.
    await fs.writeFile(live.cert, 'not a certificate\n')
    let from = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload refused/, 10000, from)

    await fs.copyFile(second.key, live.key)
    await fs.copyFile(second.cert, live.cert)
    from = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 20000, from)
    const switched = loop.seen.length
    await new Promise((resolve) => setTimeout(resolve, 300))
    await loop.stop()

    assert.deepEqual(loop.errors, [])
    assert.equal(loop.seen[0], first.fingerprint)
    assert.ok(loop.seen.length > switched, 'requests after the reload')
    assert.equal(loop.seen[loop.seen.length - 1], second.fingerprint)
    // Every handshake completed with one of the two certificates.
    for (const fingerprint of loop.seen) assert.ok(fingerprint === first.fingerprint || fingerprint === second.fingerprint)
    assert.equal((await httpsRequest(svr.port, '/')).fingerprint, second.fingerprint)
  })

  it('should swap certificates in single-threaded mode too', async (t) => {
    const site = await makeSite(t)
    const first = await makeCertificate(site.dir, 'first')
    const second = await makeCertificate(site.dir, 'second')
    await site.writeConfig({ secure: true, sport: '127.0.0.1:0', cert: first.cert, key: first.key })
    const svr = await startSvr(t, site.configFile, { args: ['--single-threaded'] })
    assert.equal((await httpsRequest(svr.port, '/')).fingerprint, first.fingerprint)
    await site.writeConfig({ secure: true, sport: '127.0.0.1:0', cert: second.cert, key: second.key })
    const from = svr.output.length
    svr.signal('SIGHUP')
    await svr.waitFor(/reload applied/, 10000, from)
    assert.equal((await httpsRequest(svr.port, '/')).fingerprint, second.fingerprint)
  })
})
