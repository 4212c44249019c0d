'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const zlib = require('node:zlib')
const { makeSite, startSvr } = require('../helpers/server')
const { requestBytes } = require('../helpers/binary-http')
const { createScope } = require('../helpers/scope')

function text (length, word) {
  let out = ''
  for (let i = 0; out.length < length; i++) out += word + ' ' + i + '\n'
  return out.slice(0, length)
}

const BIG = text(6756, 'the quick brown fox')
const SMALL = text(100, 'tiny')
// Beyond the 1 MiB a worker holds in memory: streamed through an encoder.
const HUGE = text(1200 * 1024, 'a file too big to hold in memory')
const APP_JS = text(3000, 'console.log("original")')
const SIDECAR_BR = text(500, 'precompressed by brotli')
const SIDECAR_GZ = text(500, 'precompressed by gzip')
const CSS = text(3000, 'body { color: red }')
const STALE_GZ = text(500, 'an outdated sidecar')

const FILES = {
  'big.txt': BIG,
  'huge.txt': HUGE,
  'changing.txt': text(5000, 'first version'),
  'small.txt': SMALL,
  'image.png': crypto.randomBytes(3000),
  'blob.unknownext': text(3000, 'no known type'),
  'nocompress/page.txt': text(3000, 'excluded by dontCompress'),
  'notes.plain.txt': text(3000, 'excluded by a dontCompress regex with a leading .*'),
  'pre/app.js': APP_JS,
  'pre/app.js.br': zlib.brotliCompressSync(SIDECAR_BR),
  'pre/app.js.gz': zlib.gzipSync(SIDECAR_GZ),
  'stale/app.css': CSS,
  'stale/app.css.gz': zlib.gzipSync(STALE_GZ),
  'gzonly/app.css': CSS,
  'gzonly/app.css.gz': zlib.gzipSync(SIDECAR_GZ),
  'archive.txt.gz': zlib.gzipSync(text(3000, 'already compressed'))
}

const DECODERS = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync }

function get (port, target, acceptEncoding, headers = {}) {
  const all = acceptEncoding === undefined ? headers : { 'Accept-Encoding': acceptEncoding, ...headers }
  return requestBytes(port, target, { headers: all })
}

/** Assert a response body in the given coding (or none) decodes to `expected`. */
function assertBody (res, coding, expected) {
  assert.equal(res.status, 200)
  assert.equal(res.headers['content-encoding'], coding)
  const body = coding === undefined ? res.body : DECODERS[coding](res.body)
  assert.equal(body.toString(), expected)
}

async function touch (file, offsetSeconds) {
  const when = new Date(Date.now() + offsetSeconds * 1000)
  await fs.utimes(file, when, when)
}

describe('compression', () => {
  const scope = createScope()
  let port
  let webroot

  before(async () => {
    const site = await makeSite(scope, { workers: 1, dontCompress: ['/^\\/nocompress\\//', '/.*\\.plain\\.txt$/'] }, FILES)
    webroot = site.webroot
    // Sidecars must not be older than their file; the stale one must be.
    await touch(path.join(webroot, 'pre/app.js.br'), 10)
    await touch(path.join(webroot, 'pre/app.js.gz'), 10)
    await touch(path.join(webroot, 'gzonly/app.css.gz'), 10)
    await touch(path.join(webroot, 'stale/app.css.gz'), -3600)
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  describe('on the fly', () => {
    it('should send br that decodes to the file, with its length and Vary', async () => {
      const res = await get(port, '/big.txt', 'gzip, deflate, br')
      assertBody(res, 'br', BIG)
      // Coded once and held with the file: the length is known.
      assert.equal(res.headers['content-length'], String(res.body.length))
      assert.equal(res.headers['content-type'], 'text/plain; charset=utf-8')
      assert.equal(res.headers.vary, 'Accept-Encoding')
      assert.ok(res.body.length < BIG.length, 'the body is actually compressed')
    })

    it('should answer again from the held coded body, the same bytes and tag', async () => {
      const first = await get(port, '/big.txt', 'br')
      const again = await get(port, '/big.txt', 'br')
      assert.ok(again.body.equals(first.body))
      assert.equal(again.headers.etag, first.headers.etag)
      assert.match(again.headers.etag, /-br"$/)
    })

    it('should code a changed file anew, within a second', async () => {
      const first = await get(port, '/changing.txt', 'gzip')
      assertBody(first, 'gzip', FILES['changing.txt'])
      const changed = text(7000, 'second version')
      await fs.writeFile(path.join(webroot, 'changing.txt'), changed)
      await new Promise((resolve) => setTimeout(resolve, 1200))
      const after = await get(port, '/changing.txt', 'gzip')
      assertBody(after, 'gzip', changed)
      assert.notEqual(after.headers.etag, first.headers.etag)
    })

    it('should stream a file too big to hold through the encoder, chunked', async () => {
      const res = await get(port, '/huge.txt', 'br')
      assertBody(res, 'br', HUGE)
      assert.equal(res.headers['content-length'], undefined)
      assert.equal(res.headers['transfer-encoding'], 'chunked')
      assert.equal(res.headers.vary, 'Accept-Encoding')
    })

    it('should send gzip that decodes to the file', async () => {
      const res = await get(port, '/big.txt', 'gzip')
      assertBody(res, 'gzip', BIG)
      assert.equal(res.headers.vary, 'Accept-Encoding')
    })

    it('should respect q-values', async () => {
      assertBody(await get(port, '/big.txt', 'gzip;q=1, br;q=0.5'), 'gzip', BIG)
      assertBody(await get(port, '/big.txt', 'gzip;q=0, br'), 'br', BIG)
      assertBody(await get(port, '/big.txt', 'br;q=0, *'), 'gzip', BIG)
      assertBody(await get(port, '/big.txt', 'identity;q=0, gzip'), 'gzip', BIG)
      assertBody(await get(port, '/big.txt', 'identity, gzip;q=0.5'), undefined, BIG)
    })

    it('should send identity, with Vary, when no offered coding is acceptable', async () => {
      for (const value of [undefined, '', 'gzip;q=0', 'deflate', 'identity;q=0', '*;q=0']) {
        const res = await get(port, '/big.txt', value)
        assertBody(res, undefined, BIG)
        assert.equal(res.headers['content-length'], '6756', String(value))
        assert.equal(res.headers.vary, 'Accept-Encoding', String(value))
      }
    })

    it('should not compress small files, incompressible types, unknown types or dontCompress paths', async () => {
      const cases = [['/small.txt', SMALL], ['/image.png', FILES['image.png']], ['/blob.unknownext', FILES['blob.unknownext']],
        ['/nocompress/page.txt', FILES['nocompress/page.txt']], ['/notes.plain.txt', FILES['notes.plain.txt']], ['/archive.txt.gz', FILES['archive.txt.gz']]]
      for (const [target, content] of cases) {
        const res = await get(port, target, 'gzip, br')
        assert.equal(res.status, 200, target)
        assert.equal(res.headers['content-encoding'], undefined, target)
        assert.equal(res.headers.vary, undefined, target + ' cannot vary')
        assert.ok(res.body.equals(Buffer.from(content)), target)
      }
    })

    it('should serve ranges from the identity representation', async () => {
      const res = await get(port, '/big.txt', 'gzip, br', { Range: 'bytes=10-19' })
      assert.equal(res.status, 206)
      assert.equal(res.headers['content-encoding'], undefined)
      assert.equal(res.headers['content-range'], 'bytes 10-19/6756')
      assert.equal(res.headers.vary, 'Accept-Encoding')
      assert.equal(res.body.toString(), BIG.slice(10, 20))
    })

    it('should answer HEAD with the coded headers and no body', async () => {
      const full = await get(port, '/big.txt', 'br')
      const res = await requestBytes(port, '/big.txt', { method: 'HEAD', headers: { 'Accept-Encoding': 'br' } })
      assert.equal(res.status, 200)
      assert.equal(res.headers['content-encoding'], 'br')
      assert.equal(res.headers['content-length'], full.headers['content-length'])
      assert.equal(res.headers.etag, full.headers.etag)
      assert.equal(res.body.length, 0)
      const huge = await requestBytes(port, '/huge.txt', { method: 'HEAD', headers: { 'Accept-Encoding': 'br' } })
      assert.equal(huge.headers['content-encoding'], 'br')
      assert.equal(huge.headers['content-length'], undefined)
      assert.equal(huge.body.length, 0)
    })
  })

  describe('ETags', () => {
    it('should give each representation its own strong tag', async () => {
      const identity = (await get(port, '/big.txt')).headers.etag
      const br = (await get(port, '/big.txt', 'br')).headers.etag
      const gzip = (await get(port, '/big.txt', 'gzip')).headers.etag
      for (const tag of [identity, br, gzip]) assert.match(tag, /^"[^"]+"$/)
      assert.equal(new Set([identity, br, gzip]).size, 3)
      assert.equal((await get(port, '/big.txt', 'br')).headers.etag, br, 'stable across requests')
    })

    it('should answer 304 only when If-None-Match names the selected representation', async () => {
      const br = (await get(port, '/big.txt', 'br')).headers.etag
      const gzip = (await get(port, '/big.txt', 'gzip')).headers.etag
      const identity = (await get(port, '/big.txt')).headers.etag

      const hit = await get(port, '/big.txt', 'br', { 'If-None-Match': br })
      assert.equal(hit.status, 304)
      assert.equal(hit.headers.etag, br)
      assert.equal(hit.headers.vary, 'Accept-Encoding')
      assert.equal(hit.headers['content-encoding'], undefined)
      assert.equal(hit.body.length, 0)
      assert.equal((await get(port, '/big.txt', 'gzip', { 'If-None-Match': gzip })).status, 304)
      const identityHit = await get(port, '/big.txt', undefined, { 'If-None-Match': identity })
      assert.equal(identityHit.status, 304)
      assert.equal(identityHit.headers.vary, 'Accept-Encoding')

      assertBody(await get(port, '/big.txt', 'br', { 'If-None-Match': gzip }), 'br', BIG)
      assertBody(await get(port, '/big.txt', 'gzip', { 'If-None-Match': identity }), 'gzip', BIG)
      assertBody(await get(port, '/big.txt', undefined, { 'If-None-Match': br }), undefined, BIG)
    })

    it('should answer If-Modified-Since and If-Match for a coded representation', async () => {
      const res = await get(port, '/big.txt', 'gzip')
      const lastModified = res.headers['last-modified']
      assert.equal((await get(port, '/big.txt', 'gzip', { 'If-Modified-Since': lastModified })).status, 304)
      assertBody(await get(port, '/big.txt', 'gzip', { 'If-Match': res.headers.etag }), 'gzip', BIG)
      const failed = await get(port, '/big.txt', 'gzip', { 'If-Match': '"nope"' })
      assert.equal(failed.status, 412)
      assert.equal(failed.headers.etag, undefined)
      assert.equal(failed.headers['content-encoding'], undefined)
    })
  })

  describe('precompressed sidecars', () => {
    it('should serve file.br with the file\'s type, its own length and tag', async () => {
      const res = await get(port, '/pre/app.js', 'br, gzip')
      assertBody(res, 'br', SIDECAR_BR)
      assert.equal(res.headers['content-type'], 'text/javascript; charset=utf-8')
      assert.equal(res.headers['content-length'], String(FILES['pre/app.js.br'].length))
      assert.equal(res.headers.vary, 'Accept-Encoding')
      const again = await get(port, '/pre/app.js', 'br', { 'If-None-Match': res.headers.etag })
      assert.equal(again.status, 304)
    })

    it('should serve file.gz to a client that takes only gzip', async () => {
      const res = await get(port, '/pre/app.js', 'gzip')
      assertBody(res, 'gzip', SIDECAR_GZ)
      assert.equal(res.headers['content-length'], String(FILES['pre/app.js.gz'].length))
    })

    it('should prefer an acceptable sidecar to compressing on the fly', async () => {
      assertBody(await get(port, '/gzonly/app.css', 'br, gzip'), 'gzip', SIDECAR_GZ)
    })

    it('should still prefer the sidecar after a br-only client had the file coded in memory', async () => {
      // The br body made for the first client is held with the file; the
      // second client takes gzip too, and has the sidecar, as before.
      assertBody(await get(port, '/gzonly/app.css', 'br'), 'br', CSS)
      assertBody(await get(port, '/gzonly/app.css', 'br'), 'br', CSS)
      assertBody(await get(port, '/gzonly/app.css', 'br, gzip'), 'gzip', SIDECAR_GZ)
      assertBody(await get(port, '/gzonly/app.css', 'br, gzip'), 'gzip', SIDECAR_GZ)
    })

    it('should ignore a sidecar older than its file', async () => {
      assertBody(await get(port, '/stale/app.css', 'gzip'), 'gzip', CSS)
    })

    it('should send the file itself to a client without a matching coding', async () => {
      assertBody(await get(port, '/pre/app.js'), undefined, APP_JS)
    })

    it('should answer HEAD with the sidecar\'s length', async () => {
      const res = await requestBytes(port, '/pre/app.js', { method: 'HEAD', headers: { 'Accept-Encoding': 'br' } })
      assert.equal(res.status, 200)
      assert.equal(res.headers['content-encoding'], 'br')
      assert.equal(res.headers['content-length'], String(FILES['pre/app.js.br'].length))
      assert.equal(res.body.length, 0)
    })
  })
})

describe('compression settings', () => {
  const scope = createScope()
  const ports = {}

  before(async () => {
    const files = { 'big.txt': BIG, 'small.txt': SMALL, 'pre/app.js': APP_JS, 'pre/app.js.br': zlib.brotliCompressSync(SIDECAR_BR) }
    const off = await makeSite(scope, { workers: 1, enableCompression: false }, files)
    const tuned = await makeSite(scope, {
      workers: 1,
      compressionMinSize: 50,
      enableETag: false,
      customHeaders: { Vary: 'Origin' }
    }, files)
    await touch(path.join(off.webroot, 'pre/app.js.br'), 10)
    const [a, b] = await Promise.all([startSvr(scope, off.configFile), startSvr(scope, tuned.configFile)])
    ports.off = a.port
    ports.tuned = b.port
  })
  after(() => scope.cleanup())

  it('should neither compress, use sidecars nor send Vary with enableCompression false', async () => {
    for (const [target, content] of [['/big.txt', BIG], ['/pre/app.js', APP_JS]]) {
      const res = await get(ports.off, target, 'br, gzip')
      assertBody(res, undefined, content)
      assert.equal(res.headers.vary, undefined)
    }
  })

  it('should compress files from compressionMinSize bytes on', async () => {
    assertBody(await get(ports.tuned, '/small.txt', 'gzip'), 'gzip', SMALL)
  })

  it('should add Accept-Encoding to a Vary from customHeaders', async () => {
    assert.equal((await get(ports.tuned, '/big.txt', 'gzip')).headers.vary, 'Origin, Accept-Encoding')
  })

  it('should send no ETag with enableETag false and still answer If-Modified-Since', async () => {
    for (const coding of [undefined, 'gzip']) {
      const res = await get(ports.tuned, '/big.txt', coding)
      assertBody(res, coding, BIG)
      assert.equal(res.headers.etag, undefined)
      const again = await get(ports.tuned, '/big.txt', coding, { 'If-Modified-Since': res.headers['last-modified'] })
      assert.equal(again.status, 304, String(coding))
      assert.equal((await get(ports.tuned, '/big.txt', coding, { 'If-Match': '"x"' })).status, 412)
    }
  })
})
