'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const { createScope } = require('../helpers/scope')
const { listingRows, stylesMatchCsp } = require('../helpers/listing')

// Names that break naive HTML or URL building.
const ODD_NAMES = [
  '<script>alert(1)<script>.txt',
  'quote"double\'single.txt',
  '100%.txt',
  '%41%2e.txt',
  'with space.txt',
  'hash#tag.txt',
  'what?.txt',
  'café.txt',
  '日本.txt',
  'a&amp;b.txt',
  'colon:name.txt'
]

const SITE_CSP = "default-src 'self' https://cdn.example"

const FILES = {
  'top.txt': 'top\n',
  // Refused by the forbidden stage, so not listed either.
  'serverSideScript.js': '// not a script svr runs\n',
  'dir/.hidden': 'hidden\n',
  'dir/.dirhead': '<p id="dirhead">the header</p>',
  'dir/Zeta.txt': 'Z\n',
  'dir/alpha.txt': 'a\n',
  'dir/beta.html': '<p>b</p>\n',
  'dir/kilo.bin': Buffer.alloc(1536),
  'dir/zdir/inner.txt': 'inner\n',
  'dir/Adir/inner.txt': 'inner\n',
  'café/日本.txt': 'unicode\n',
  'heads/HEAD.html': '<p id="head-html">HEAD.html header</p>',
  'heads/FOOT.html': '<p id="foot-html">FOOT.html footer</p>',
  'heads/.dirfoot': '<p id="dirfoot">dot footer wins</p>',
  'heads/.maindesc': '<p id="maindesc">about this directory</p>',
  'heads/file.txt': 'f\n',
  'fulldoc/.dirhead': '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body><p id="own-doc">own document</p>',
  'fulldoc/.dirfoot': '</body></html>',
  'fulldoc/file.txt': 'f\n',
  'cache/first.txt': '1\n',
  'cache/.maindesc': 'version one',
  'withindex/index.html': '<p>an index</p>\n'
}
for (const [i, name] of ODD_NAMES.entries()) FILES['dir/' + name] = 'odd file ' + i + '\n'

describe('directory listings', () => {
  const scope = createScope()
  let port
  let site

  before(async () => {
    site = await makeSite(scope, {
      workers: 1,
      enableDirectoryListing: true,
      enableDirectoryListingVHost: [{ host: 'nolist.test', enabled: false }],
      customHeadersVHost: [{ host: 'csp.test', headers: { 'Content-Security-Policy': SITE_CSP } }]
    }, FILES)
    await fs.symlink('does-not-exist', path.join(site.webroot, 'dir', 'dangling'))
    await fs.mkdir(path.join(site.webroot, 'empty'))
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should list directories first, then files, each sorted by name', async () => {
    const res = await request(port, '/dir/')
    assert.equal(res.status, 200)
    const names = listingRows(res.body).map((row) => row.text)
    assert.equal(names[0], '../')
    const entries = names.slice(1)
    assert.deepEqual(entries.slice(0, 2), ['Adir/', 'zdir/'])
    const files = entries.slice(2)
    const expected = ['Zeta.txt', 'alpha.txt', 'beta.html', 'kilo.bin', 'dangling (broken link)', ...ODD_NAMES]
    assert.deepEqual([...files].sort(), [...expected].sort())
    const keys = files.map((name) => name.toLowerCase())
    assert.deepEqual(keys, [...keys].sort(), 'files in case-insensitive order')
    assert.ok(files.indexOf('alpha.txt') < files.indexOf('beta.html'))
    assert.ok(files.indexOf('beta.html') < files.indexOf('Zeta.txt'))
  })

  it('should hide dotfiles and the header files', async () => {
    const rows = listingRows((await request(port, '/dir/')).body)
    assert.ok(!rows.some((row) => row.text !== '../' && row.text.startsWith('.')))
    assert.ok(!rows.some((row) => row.text === 'HEAD.html'))
    const heads = listingRows((await request(port, '/heads/')).body).map((row) => row.text)
    assert.deepEqual(heads, ['../', 'file.txt'])
  })

  it('should escape every name and link each to its file', async () => {
    const res = await request(port, '/dir/')
    assert.ok(!res.body.includes('<script>'), 'no raw <script> in the page')
    assert.ok(res.body.includes('&lt;script&gt;alert(1)&lt;script&gt;.txt'))
    assert.ok(res.body.includes('quote&quot;double&#39;single.txt'))
    assert.ok(res.body.includes('a&amp;amp;b.txt'))
    const rows = listingRows(res.body)
    for (const [i, name] of ODD_NAMES.entries()) {
      const row = rows.find((r) => r.text === name)
      assert.ok(row, 'row for ' + name)
      assert.ok(!/[#?:"<>\s]/.test(row.href), 'href is percent-encoded: ' + row.href)
      const file = await request(port, '/dir/' + row.href)
      assert.equal(file.status, 200, name + ' via ' + row.href)
      assert.equal(file.body, 'odd file ' + i + '\n')
    }
  })

  it('should link directories with a trailing slash and the parent as ../', async () => {
    const rows = listingRows((await request(port, '/dir/')).body)
    assert.deepEqual(rows[0], { href: '../', text: '../' })
    assert.equal(rows.find((row) => row.text === 'zdir/').href, 'zdir/')
    const inner = await request(port, '/dir/zdir/')
    assert.deepEqual(listingRows(inner.body).map((row) => row.text), ['../', 'inner.txt'])
  })

  it('should have no parent link at the root', async () => {
    const res = await request(port, '/')
    assert.equal(res.status, 200)
    const rows = listingRows(res.body)
    assert.ok(!rows.some((row) => row.href === '../'))
    assert.ok(rows.some((row) => row.text === 'top.txt'))
    assert.ok(!rows.some((row) => row.text === 'serverSideScript.js'))
    assert.equal((await request(port, '/serverSideScript.js')).status, 403)
    assert.match(res.body, /<title>Index of \/<\/title>/)
  })

  it('should title the page with the decoded path', async () => {
    const res = await request(port, '/caf%C3%A9/')
    assert.equal(res.status, 200)
    assert.match(res.body, /<title>Index of \/café\/<\/title>/)
    assert.match(res.body, /<h1>Index of \/café\/<\/h1>/)
    const row = listingRows(res.body).find((r) => r.text === '日本.txt')
    assert.equal((await request(port, '/caf%C3%A9/' + row.href)).body, 'unicode\n')
  })

  it('should show sizes, ISO dates and broken links', async () => {
    const res = await request(port, '/dir/')
    const stat = await fs.stat(path.join(site.webroot, 'dir', 'kilo.bin'))
    const iso = new Date(stat.mtimeMs).toISOString()
    const kilo = new RegExp('>kilo\\.bin</a></td><td class="sz">1\\.5 KiB</td><td class="dt"><time datetime="' +
      iso.slice(0, 19) + 'Z">' + iso.slice(0, 10) + ' ' + iso.slice(11, 16) + '</time>')
    assert.match(res.body, kilo)
    assert.match(res.body, />zdir\/<\/a><\/td><td class="sz">-<\/td>/)
    const dangling = listingRows(res.body).find((row) => row.text.startsWith('dangling'))
    assert.equal(dangling.href, null)
    assert.match(dangling.text, /broken link/)
  })

  it('should send the page with a strict policy and nosniff', async () => {
    const res = await request(port, '/dir/zdir/')
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8')
    assert.equal(res.headers['x-content-type-options'], 'nosniff')
    assert.equal(Number(res.headers['content-length']), Buffer.byteLength(res.body))
    const csp = res.headers['content-security-policy']
    assert.match(csp, /default-src 'none'/)
    assert.match(csp, /img-src data:/)
    assert.ok(!csp.includes('unsafe-inline'))
    assert.ok(stylesMatchCsp(res.body, csp), 'the inline stylesheet is allowed by its hash')
    assert.match(res.body, /<meta name="viewport" content="width=device-width, initial-scale=1">/)
    assert.equal(res.headers.server, 'svr')
    assert.match(res.body, /<em>svr<\/em>/)
  })

  it('should answer HEAD with the headers of GET and no body', async () => {
    const get = await request(port, '/dir/')
    const head = await request(port, '/dir/', { method: 'HEAD' })
    assert.equal(head.status, 200)
    assert.equal(head.body, '')
    assert.equal(head.headers['content-length'], get.headers['content-length'])
    assert.equal(head.headers['content-type'], 'text/html; charset=utf-8')
  })

  it('should put .dirhead, .dirfoot and .maindesc around the table, before HEAD.html and FOOT.html', async () => {
    const dir = await request(port, '/dir/')
    assert.match(dir.body, /<body>\n<p id="dirhead">the header<\/p><main>/)
    const heads = await request(port, '/heads/')
    assert.match(heads.body, /<body>\n<p id="head-html">HEAD\.html header<\/p><main>/)
    assert.match(heads.body, /<\/table>\n<hr>\n<p id="maindesc">about this directory<\/p>\n<\/main>\n<p id="dirfoot">/)
    assert.ok(!heads.body.includes('foot-html'))
    // The owner's HTML may load from the site itself.
    assert.match(heads.headers['content-security-policy'], /default-src 'self'/)
  })

  it('should keep the site\'s own policy on a customised page only', async () => {
    const custom = await request(port, '/heads/', { headers: { host: 'csp.test' } })
    assert.equal(custom.headers['content-security-policy'], SITE_CSP)
    const plain = await request(port, '/dir/zdir/', { headers: { host: 'csp.test' } })
    assert.match(plain.headers['content-security-policy'], /^default-src 'none';/)
  })

  it('should use a header that is a whole document start as the page start', async () => {
    const res = await request(port, '/fulldoc/')
    assert.ok(res.body.startsWith('<!DOCTYPE html><html><head><meta charset="utf-8"><title>Index of /fulldoc/</title></head>'))
    assert.equal(res.body.match(/<html/g).length, 1)
    assert.ok(res.body.trimEnd().endsWith('</body></html>'))
  })

  it('should tag the page and answer a matching If-None-Match with 304', async () => {
    const res = await request(port, '/dir/Adir/')
    const etag = res.headers.etag
    assert.match(etag, /^"[\w-]+"$/)
    const again = await request(port, '/dir/Adir/', { headers: { 'if-none-match': etag } })
    assert.equal(again.status, 304)
    assert.equal(again.body, '')
    const failed = await request(port, '/dir/Adir/', { headers: { 'if-match': '"other"' } })
    assert.equal(failed.status, 412)
    await fs.writeFile(path.join(site.webroot, 'dir', 'Adir', 'new.txt'), 'new\n')
    const changed = await request(port, '/dir/Adir/', { headers: { 'if-none-match': etag } })
    assert.equal(changed.status, 200)
    assert.notEqual(changed.headers.etag, etag)
    assert.ok(listingRows(changed.body).some((row) => row.text === 'new.txt'))
  })

  it('should show a new file at once and an edited description within a second or two', async () => {
    const first = await request(port, '/cache/')
    assert.deepEqual(listingRows(first.body).map((row) => row.text), ['../', 'first.txt'])
    assert.ok(first.body.includes('version one'))
    await fs.writeFile(path.join(site.webroot, 'cache', 'second.txt'), '2\n')
    const second = await request(port, '/cache/')
    assert.deepEqual(listingRows(second.body).map((row) => row.text), ['../', 'first.txt', 'second.txt'])
    await fs.writeFile(path.join(site.webroot, 'cache', '.maindesc'), 'version two')
    const deadline = Date.now() + 4000
    let body = ''
    while (Date.now() < deadline && !body.includes('version two')) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      body = (await request(port, '/cache/')).body
    }
    assert.ok(body.includes('version two'))
  })

  it('should list an empty directory and leave index files and plain files to the static stage', async () => {
    const empty = await request(port, '/empty/')
    assert.equal(empty.status, 200)
    assert.deepEqual(listingRows(empty.body).map((row) => row.text), ['../'])
    assert.equal((await request(port, '/withindex/')).body, '<p>an index</p>\n')
    assert.equal((await request(port, '/top.txt')).body, 'top\n')
    assert.equal((await request(port, '/missing/')).status, 404)
  })

  it('should answer 403 where enableDirectoryListingVHost turns listings off', async () => {
    const res = await request(port, '/dir/', { headers: { host: 'NoList.test:8080' } })
    assert.equal(res.status, 403)
    assert.match(res.body, /Directory listing is disabled/)
    assert.ok(!res.body.includes('alpha.txt'))
    assert.equal((await request(port, '/dir/', { headers: { host: 'other.test' } })).status, 200)
  })
})

describe('directory listings when disabled', () => {
  const scope = createScope()
  let port

  before(async () => {
    const site = await makeSite(scope, {
      workers: 1,
      enableDirectoryListingVHost: [{ host: '*.list.test', enabled: true }],
      enableDirectoryListingWithDefaultHead: true,
      disableTrailingSlashRedirects: true
    }, {
      '.head': '<!DOCTYPE html><html><head><title>Site</title></head><body><nav id="site-nav">site head</nav>',
      '.foot': '<footer id="site-foot">site foot</footer></body></html>',
      'files/a.txt': 'a\n'
    })
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should answer 403 by default', async () => {
    const res = await request(port, '/files/')
    assert.equal(res.status, 403)
    assert.match(res.body, /Directory listing is disabled/)
    assert.ok(!res.body.includes('a.txt'))
  })

  it('should list for a host an enableDirectoryListingVHost entry enables', async () => {
    const res = await request(port, '/files/', { headers: { host: 'www.list.test' } })
    assert.equal(res.status, 200)
    assert.deepEqual(listingRows(res.body).map((row) => row.text), ['../', 'a.txt'])
  })

  it('should link entries through the directory name when its URL has no trailing slash', async () => {
    const res = await request(port, '/files', { headers: { host: 'list.test' } })
    assert.equal(res.status, 200)
    const rows = listingRows(res.body)
    assert.deepEqual(rows.map((row) => row.href), ['./', 'files/a.txt'])
    const target = new URL(rows[1].href, 'http://list.test/files').pathname
    assert.equal((await request(port, target)).body, 'a\n')
  })

  it('should wrap the listing in the site head and foot with enableDirectoryListingWithDefaultHead', async () => {
    const res = await request(port, '/files/', { headers: { host: 'list.test' } })
    assert.ok(res.body.startsWith('<!DOCTYPE html><html><head><title>Site</title></head><body><nav id="site-nav">'))
    assert.ok(res.body.trimEnd().endsWith('<footer id="site-foot">site foot</footer></body></html>'))
    assert.match(res.body, /<h1>Index of \/files\/<\/h1>/)
  })
})

describe('a directory of 10,000 entries', () => {
  const scope = createScope()
  const COUNT = 10000
  let port

  before(async () => {
    const site = await makeSite(scope, { workers: 1, enableDirectoryListing: true }, { 'small.txt': 'small\n' })
    const big = path.join(site.webroot, 'big')
    await fs.mkdir(big)
    const names = []
    for (let i = 0; i < COUNT; i++) names.push('file-' + String(i).padStart(5, '0') + '.txt')
    for (let i = 0; i < names.length; i += 200) {
      await Promise.all(names.slice(i, i + 200).map((name) => fs.writeFile(path.join(big, name), name)))
    }
    port = (await startSvr(scope, site.configFile)).port
  })
  after(() => scope.cleanup())

  it('should list every entry while answering other requests', async () => {
    let smallDone = 0
    let listingDone = 0
    const started = Date.now()
    const listing = request(port, '/big/', { timeout: 60000 }).then((res) => {
      listingDone = Date.now()
      return res
    })
    // A moment for the listing request to reach the worker first.
    await new Promise((resolve) => setTimeout(resolve, 5))
    const small = await request(port, '/small.txt').then((res) => {
      smallDone = Date.now()
      return res
    })
    const res = await listing
    assert.equal(small.body, 'small\n')
    assert.equal(res.status, 200)
    const rows = listingRows(res.body)
    assert.equal(rows.length, COUNT + 1)
    assert.equal(rows[1].text, 'file-00000.txt')
    assert.equal(rows[COUNT].text, 'file-09999.txt')
    assert.ok(smallDone < listingDone, 'the small request (' + (smallDone - started) + ' ms) finished before the listing (' +
      (listingDone - started) + ' ms)')
    assert.ok(smallDone - started < 2000, 'the small request waited ' + (smallDone - started) + ' ms')
  })
})
