'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { compileCacheSettings, decideStore, revalidatedMeta, asFillRequest, variantKey, entryState } = require('../../lib/cache/policy')

const NOW = 1_800_000_000_000
const settings = compileCacheSettings({ validity: { 200: 1, 404: 10 }, staleWhileRevalidate: 5, staleIfError: 60 })
const get = (headers = {}) => ({ method: 'GET', url: '/x', headers: { host: 'site.example', ...headers } })
const answer = (status, headers = {}) => ({ status, headers: { date: new Date(NOW).toUTCString(), ...headers } })

function decide (req, res) {
  const { meta, reason } = decideStore(req, res, settings, NOW)
  return meta === null ? reason : { fresh: meta.freshUntil - NOW, swr: meta.staleWhileRevalidateUntil - meta.freshUntil, sie: meta.staleIfErrorUntil - meta.freshUntil }
}

describe('what the response cache stores', () => {
  it('should keep an answer for what it says, or for its status\'s configured time when it says nothing', () => {
    assert.deepEqual(decide(get(), answer(200, { 'cache-control': 'max-age=30' })), { fresh: 30000, swr: 5000, sie: 60000 })
    // s-maxage implies proxy-revalidate: never served stale by a shared cache.
    assert.deepEqual(decide(get(), answer(200, { 'cache-control': 's-maxage=7, max-age=30' })), { fresh: 7000, swr: 0, sie: 0 })
    assert.deepEqual(decide(get(), answer(200, { 'cache-control': 'max-age=30, must-revalidate' })), { fresh: 30000, swr: 0, sie: 0 })
    // http-cache-semantics, as a shared cache, revalidates a proxy-revalidate answer at every use.
    assert.deepEqual(decide(get(), answer(200, { 'cache-control': 'max-age=30, proxy-revalidate', etag: '"v1"' })), { fresh: 0, swr: 0, sie: 0 })
    assert.deepEqual(decide(get(), answer(200, { expires: new Date(NOW + 20000).toUTCString() })), { fresh: 20000, swr: 5000, sie: 60000 })
    // Microcaching: nothing said, the configured second.
    assert.deepEqual(decide(get(), answer(200)), { fresh: 1000, swr: 5000, sie: 60000 })
    assert.deepEqual(decide(get(), answer(404)), { fresh: 10000, swr: 5000, sie: 60000 })
    // The answer's own stale windows, when longer.
    assert.deepEqual(decide(get(), answer(200, { 'cache-control': 'max-age=1, stale-while-revalidate=30, stale-if-error=600' })),
      { fresh: 1000, swr: 30000, sie: 600000 })
    // Explicitly not fresh, but with a validator: kept for revalidation, and never served without it.
    assert.deepEqual(decide(get(), answer(200, { 'cache-control': 'no-cache', etag: '"v1"' })), { fresh: 0, swr: 0, sie: 0 })
  })

  it('should never store what is private, personal or not a plain GET', () => {
    const refusals = [
      [get(), answer(200, { 'cache-control': 'no-store' }), 'not storable (no-store)'],
      [get(), answer(200, { 'cache-control': 'private, max-age=60' }), 'not storable (private)'],
      [get(), answer(200, { 'cache-control': 'max-age=60', 'set-cookie': 'session=1' }), 'sets a cookie'],
      [get(), answer(200, { 'cache-control': 'public, max-age=60', 'set-cookie': 'session=1' }), 'sets a cookie'],
      [get({ authorization: 'Basic eDp5' }), answer(200, { 'cache-control': 'max-age=60' }), 'request with credentials, answer not public'],
      [get({ cookie: 'session=1' }), answer(200, { 'cache-control': 'max-age=60' }), 'request with credentials, answer not public'],
      [get(), answer(200, { 'cache-control': 'max-age=60', vary: '*' }), 'not storable (Vary: *)'],
      [{ method: 'POST', url: '/x', headers: {} }, answer(200, { 'cache-control': 'max-age=60' }), 'method POST'],
      [get(), answer(500), 'not storable (status 500)'],
      [get(), answer(302, { location: '/y' }), 'not storable (status 302)'],
      [get(), answer(200, { 'cache-control': 'max-age=0' }), 'no lifetime'],
      [get(), answer(206, { 'cache-control': 'max-age=60', 'content-range': 'bytes 0-9/100' }), 'partial content']
    ]
    assert.deepEqual(refusals.map(([req, res]) => decide(req, res)), refusals.map(([, , reason]) => reason))
    // Credentials, but the answer is meant for everyone.
    assert.equal(typeof decide(get({ cookie: 'theme=dark' }), answer(200, { 'cache-control': 'public, max-age=60' })), 'object')
    assert.equal(typeof decide(get({ authorization: 'Basic eDp5' }), answer(200, { 'cache-control': 's-maxage=60' })), 'object')
  })

  it('should key variants by the fields the answer varies on', () => {
    const { meta } = decideStore(get(), answer(200, { 'cache-control': 'max-age=60', vary: 'Accept-Encoding, accept-language, Accept-Encoding' }), settings, NOW)
    assert.deepEqual(meta.vary, ['accept-encoding', 'accept-language'])
    const gzip = variantKey(meta.vary, { 'accept-encoding': 'gzip', 'accept-language': 'en' })
    const plain = variantKey(meta.vary, { 'accept-language': 'en' })
    assert.equal(gzip, '\naccept-encoding:gzip\naccept-language:en')
    assert.notEqual(gzip, plain)
    assert.equal(variantKey([], { 'accept-encoding': 'gzip' }), '')
  })

  it('should tell fresh from stale, and revalidate with the validators', () => {
    const { meta } = decideStore(get(), answer(200, { 'cache-control': 'max-age=10', etag: '"v1"', 'last-modified': new Date(NOW - 60000).toUTCString() }), settings, NOW)
    assert.deepEqual([NOW, NOW + 9999, NOW + 10000, NOW + 15000, NOW + 69999, NOW + 70000].map((t) => entryState(meta, t)),
      ['fresh', 'fresh', 'stale-while-revalidate', 'stale-if-error', 'stale-if-error', 'expired'])
    const client = { host: 'site.example', 'if-none-match': '"mine"', 'if-range': '"mine"', range: 'bytes=0-1', 'if-unmodified-since': 'x' }
    // Forwarded with the upstream's Host: the entry is matched by the client's.
    assert.deepEqual(asFillRequest({ ...client, host: 'upstream.internal' }, meta, get(client)), { host: 'upstream.internal', range: 'bytes=0-1', 'if-none-match': '"v1"', 'if-modified-since': new Date(NOW - 60000).toUTCString() })
    const dated = decideStore(get(), answer(200, { 'cache-control': 'max-age=10', 'last-modified': new Date(NOW - 60000).toUTCString() }), settings, NOW).meta
    assert.deepEqual(asFillRequest({ host: 'site.example' }, dated, get()), { host: 'site.example', 'if-modified-since': new Date(NOW - 60000).toUTCString() })
    assert.deepEqual(asFillRequest({ ...client }, null, get(client)), { host: 'site.example', range: 'bytes=0-1' })
  })

  it('should count a revalidated answer fresh again from the 304, with its fields', () => {
    const { meta } = decideStore(get(), answer(200, { 'cache-control': 'max-age=10', etag: '"v1"', 'content-type': 'text/plain', 'content-length': '5' }), settings, NOW)
    const later = NOW + 60000
    const notModified = { date: new Date(later).toUTCString(), etag: '"v1"', 'cache-control': 'max-age=20', 'content-length': '0' }
    const updated = revalidatedMeta(meta, get(), notModified, settings, later)
    assert.deepEqual({ status: updated.status, storedAt: updated.storedAt, fresh: updated.freshUntil - later, state: entryState(updated, later + 19999) },
      { status: 200, storedAt: later, fresh: 20000, state: 'fresh' })
    assert.deepEqual(updated.headers, { ...meta.headers, date: notModified.date, 'cache-control': 'max-age=20' })
    // A 304 for another tag does not update this answer.
    assert.equal(revalidatedMeta(meta, get(), { ...notModified, etag: '"v2"' }, settings, later), null)
  })
})
