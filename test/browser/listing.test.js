'use strict'

// Functions passed to page.evaluate and friends run in the page.
/* global document, window, getComputedStyle */

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { createScope } = require('../helpers/scope')
const { requireTools, skipWithout, which } = require('../helpers/tools')

const ARTIFACTS = path.join(__dirname, '..', 'artifacts')
// Debian's chromium from PATH, or another browser named by CHROMIUM_PATH.
const CHROMIUM = process.env.CHROMIUM_PATH
const SKIP = CHROMIUM ? false : skipWithout('chromium')

const HOSTILE = '<img src=x onerror=alert(1)>.txt'

describe('directory listing in a browser', { skip: SKIP }, () => {
  const scope = createScope()
  let browser
  let origin

  before(async () => {
    if (!CHROMIUM) requireTools(null, 'chromium')
    const { chromium } = require('playwright-core')
    const site = await makeSite(scope, { workers: 1, enableDirectoryListing: true }, {
      'files/readme.md': '# read me\n',
      'files/page.html': '<p>page</p>\n',
      'files/photo.png': Buffer.alloc(2048),
      'files/archive.zip': Buffer.alloc(5000),
      'files/zz-sub/a.txt': 'a\n',
      'files/aa-sub/b.txt': 'b\n',
      'files/.hidden': 'x\n',
      ['files/' + HOSTILE]: 'hostile\n',
      'files/a very long file name that has to wrap on a narrow phone screen somehow.txt': 'long\n'
    })
    fs.symlinkSync('nowhere', path.join(site.webroot, 'files', 'dangling-link'))
    origin = (await startSvr(scope, site.configFile)).origin
    browser = await chromium.launch({
      executablePath: CHROMIUM || which('chromium'),
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking']
    })
    scope.after(() => browser.close())
    fs.mkdirSync(ARTIFACTS, { recursive: true })
  })
  after(() => scope.cleanup())

  /** Open a page and record everything that would reveal a problem. */
  async function open (url, viewport) {
    const context = await browser.newContext({ viewport })
    scope.after(() => context.close())
    const page = await context.newPage()
    const problems = []
    page.on('console', (msg) => {
      // Failed loads are judged by URL below.
      if ((msg.type() === 'error' || msg.type() === 'warning') && !msg.text().startsWith('Failed to load resource')) {
        problems.push(msg.text())
      }
    })
    page.on('response', (res) => {
      // A browser asks for /favicon.ico on its own for a plain-text page.
      if (res.status() >= 400 && !res.url().endsWith('/favicon.ico')) problems.push(res.status() + ' for ' + res.url())
    })
    page.on('pageerror', (err) => problems.push('page error: ' + err.message))
    page.on('dialog', (dialog) => {
      problems.push('dialog: ' + dialog.message())
      dialog.dismiss()
    })
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI)
      })
    })
    const response = await page.goto(url)
    return { page, problems, response }
  }

  it('should render the listing as text, in order, without any policy violation', async () => {
    const { page, problems, response } = await open(origin + '/files/', { width: 1024, height: 700 })
    assert.equal(response.status(), 200)
    assert.equal(await page.title(), 'Index of /files/')
    const rows = await page.$$eval('#listing tbody tr', (trs) => trs.map((tr) => ({
      name: tr.querySelector('td.nm').textContent,
      href: tr.querySelector('td.nm a') === null ? null : tr.querySelector('td.nm a').getAttribute('href'),
      icon: getComputedStyle(tr.querySelector('td.ic')).backgroundImage
    })))
    assert.deepEqual(rows.map((row) => row.name), [
      '../', 'aa-sub/', 'zz-sub/', HOSTILE, 'a very long file name that has to wrap on a narrow phone screen somehow.txt',
      'archive.zip', 'dangling-link (broken link)', 'page.html', 'photo.png', 'readme.md'
    ])
    assert.equal(rows[0].href, '../')
    for (const row of rows) {
      if (row.name !== 'dangling-link (broken link)') assert.match(row.icon, /^url\("data:image\/svg\+xml/, row.name)
    }
    // The hostile name is text: no element came out of it, nothing ran.
    assert.equal(await page.$$eval('img', (imgs) => imgs.length), 0)
    assert.deepEqual(problems, [])
    await page.screenshot({ path: path.join(ARTIFACTS, 'listing.png'), fullPage: true })
  })

  it('should follow a link to a file with an odd name', async () => {
    const { page, problems } = await open(origin + '/files/', { width: 1024, height: 700 })
    await Promise.all([page.waitForURL(/onerror.*\.txt$/), page.getByText(HOSTILE, { exact: true }).click()])
    assert.equal(await page.textContent('body'), 'hostile\n')
    assert.deepEqual(problems, [])
  })

  it('should fit a phone screen without sideways scrolling', async () => {
    const { page, problems } = await open(origin + '/files/', { width: 360, height: 740 })
    const widths = await page.evaluate(() => ({ content: document.documentElement.scrollWidth, viewport: window.innerWidth }))
    assert.ok(widths.content <= widths.viewport, JSON.stringify(widths))
    assert.deepEqual(problems, [])
    await page.screenshot({ path: path.join(ARTIFACTS, 'listing-phone.png'), fullPage: true })
  })
})
