'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { formatSize, entryHref, renderListing } = require('../../lib/listing/render')
const { readEntries, sortEntries } = require('../../lib/listing/read')
const { createPageCache } = require('../../lib/listing/page-cache')
const { iconFor } = require('../../lib/listing/icons')
const { listingRows, stylesMatchCsp } = require('../helpers/listing')

const NO_CHROME = Object.freeze({ head: '', foot: '', maindesc: '', siteHead: '', siteFoot: '' })

function entry (name, kind = 'file', size = 1, mtimeMs = 0) {
  return { name, kind, size, mtimeMs }
}

describe('formatSize', () => {
  it('should use bytes below 1 KiB and binary units above', () => {
    assert.equal(formatSize(0), '0 B')
    assert.equal(formatSize(1023), '1023 B')
    assert.equal(formatSize(1024), '1 KiB')
    assert.equal(formatSize(1536), '1.5 KiB')
    assert.equal(formatSize(15 * 1024 + 700), '16 KiB')
    assert.equal(formatSize(5 * 1024 * 1024), '5 MiB')
    assert.equal(formatSize(1024 * 1024 - 100), '1 MiB')
    assert.equal(formatSize(3.25 * 1024 ** 4), '3.3 TiB')
  })
})

describe('entryHref', () => {
  it('should percent-encode the name and escape it for an attribute', () => {
    assert.equal(entryHref('a b#c?d%e:f', false), 'a%20b%23c%3Fd%25e%3Af')
    assert.equal(entryHref("it's", true), 'it&#39;s/')
    assert.equal(entryHref('日本', false), '%E6%97%A5%E6%9C%AC')
  })

  it('should give up on a name that is not valid Unicode', () => {
    assert.equal(entryHref('bad\ud800', false), null)
  })
})

describe('sortEntries', () => {
  it('should put directories first, then sort by name ignoring case, then by code unit', () => {
    const sorted = sortEntries([
      entry('b.txt'), entry('Zed', 'dir'), entry('a.txt'), entry('B.txt'), entry('alpha', 'dir'), entry('broken', 'broken')
    ])
    assert.deepEqual(sorted.map((e) => e.name), ['alpha', 'Zed', 'a.txt', 'B.txt', 'b.txt', 'broken'])
  })
})

describe('iconFor', () => {
  it('should pick an icon by kind, then by name, then by media type', () => {
    assert.equal(iconFor(entry('x', 'dir')), 'dir')
    assert.equal(iconFor(entry('x', 'broken')), 'broken')
    assert.equal(iconFor(entry('README.md')), 'important')
    assert.equal(iconFor(entry('a.HTML')), 'html')
    assert.equal(iconFor(entry('a.png')), 'image')
    assert.equal(iconFor(entry('a.tar.gz')), 'archive')
    assert.equal(iconFor(entry('a.docx')), 'doc')
    assert.equal(iconFor(entry('noextension')), 'file')
  })
})

describe('renderListing', () => {
  async function render (overrides) {
    return renderListing({
      path: '/d/',
      atRoot: false,
      hrefPrefix: '',
      entries: [entry('x<y>.txt', 'file', 10, Date.UTC(2024, 1, 3, 4, 5, 6))],
      server: 'svr',
      chrome: NO_CHROME,
      ...overrides
    })
  }

  it('should escape the title and the names', async () => {
    const { html } = await render({ path: '/<b>&"/' })
    assert.match(html, /<title>Index of \/&lt;b&gt;&amp;&quot;\/<\/title>/)
    assert.ok(html.includes('x&lt;y&gt;.txt'))
    assert.ok(!html.includes('<b>'))
    assert.match(html, /<time datetime="2024-02-03T04:05:06Z">2024-02-03 04:05<\/time>/)
  })

  it('should allow its stylesheet by hash in a strict policy', async () => {
    const { html, csp, custom } = await render()
    assert.equal(custom, false)
    assert.ok(stylesMatchCsp(html, csp))
    assert.match(csp, /^default-src 'none';/)
  })

  it('should prefix links with the directory name when the URL has no trailing slash', async () => {
    const rows = listingRows((await render({ path: '/d', hrefPrefix: 'd' + '/' })).html)
    assert.deepEqual(rows.map((row) => row.href), ['./', 'd/x%3Cy%3E.txt'])
  })

  it('should render a long listing over many event-loop turns', async () => {
    const entries = []
    for (let i = 0; i < 10000; i++) entries.push(entry('file-' + i + '.txt', 'file', i, 0))
    let turns = 0
    let done = false
    const tick = () => {
      turns++
      if (!done) setImmediate(tick)
    }
    setImmediate(tick)
    const { html } = await render({ entries })
    done = true
    assert.equal(listingRows(html).length, 10001)
    assert.ok(turns >= 10, 'other callbacks ran ' + turns + ' times meanwhile')
  })

  it('should relax the policy for a page with the owner\'s HTML', async () => {
    const { html, custom, csp } = await render({ chrome: { ...NO_CHROME, maindesc: '<img src="/logo.png">' } })
    assert.equal(custom, true)
    assert.ok(html.includes('<hr>\n<img src="/logo.png">'))
    assert.match(csp, /img-src 'self'/)
  })
})

describe('readEntries', () => {
  it('should stat every visible entry, mark dangling links and skip the given names', async (t) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-listing-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    await fs.writeFile(path.join(dir, 'file.txt'), '12345')
    await fs.writeFile(path.join(dir, '.dot'), '')
    await fs.writeFile(path.join(dir, 'HEAD.html'), '')
    await fs.mkdir(path.join(dir, 'sub'))
    await fs.symlink('missing', path.join(dir, 'dangling'))
    await fs.symlink('file.txt', path.join(dir, 'link'))
    const entries = sortEntries(await readEntries(dir, (name) => name === 'HEAD.html'))
    assert.deepEqual(entries.map((e) => [e.name, e.kind, e.size]), [
      ['sub', 'dir', -1], ['dangling', 'broken', -1], ['file.txt', 'file', 5], ['link', 'file', 5]
    ])
    assert.ok(entries[2].mtimeMs > 0)
  })

  it('should reject when the directory cannot be read', async () => {
    await assert.rejects(readEntries(path.join(os.tmpdir(), 'svr-no-such-dir-' + process.pid)), { code: 'ENOENT' })
  })
})

describe('createPageCache', () => {
  const page = (size) => ({ body: Buffer.alloc(size) })

  it('should evict the least recently used page beyond the count', () => {
    const cache = createPageCache({ maxEntries: 2, maxBytes: 1000 })
    cache.set('a', page(1))
    cache.set('b', page(1))
    cache.get('a')
    cache.set('c', page(1))
    assert.ok(cache.get('a'))
    assert.equal(cache.get('b'), undefined)
    assert.ok(cache.get('c'))
  })

  it('should stay within its byte budget and not keep a page bigger than it', () => {
    const cache = createPageCache({ maxEntries: 10, maxBytes: 100 })
    cache.set('a', page(60))
    cache.set('b', page(60))
    assert.equal(cache.get('a'), undefined)
    assert.ok(cache.get('b'))
    cache.set('huge', page(101))
    assert.equal(cache.get('huge'), undefined)
    assert.ok(cache.get('b'))
    cache.set('b', page(10))
    cache.set('c', page(90))
    assert.ok(cache.get('b') && cache.get('c'), 'a replaced page frees its old size')
  })
})
