'use strict'

// The configurations of the cost curves: one dimension of a site grown by
// 10× and 100×, everything else as in the default bench config. The
// entries look like what SVR.JS users write, and none of them matches the
// request the row loads, so that the row measures what the entries cost.

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const tar = require('tar')
const { createUserRecord } = require('../lib/auth/hash')

/**
 * The dimensions, each with its sizes (the first is the row the others are
 * compared with), the request it loads and the config and files of a size.
 * prepare(n, rowDir, site) returns the config keys of the row.
 */
const DIMENSIONS = [
  {
    name: 'rewriteMap',
    what: '`rewriteMap` rules, none matching (1% without a literal prefix)',
    sizes: [10, 1000, 10000],
    target: '/1k.html',
    connections: 50,
    prepare: async (n) => ({ rewriteMap: rewriteRules(n) })
  },
  {
    name: 'vhosts',
    what: '`customHeadersVHost` entries, none matching (1 in 10 a wildcard)',
    sizes: [1, 100, 1000],
    target: '/1k.html',
    connections: 50,
    prepare: async (n) => ({ customHeadersVHost: vhostEntries(n) })
  },
  {
    name: 'blacklist',
    what: '`blacklist` entries: addresses and /24 ranges, 1 in 20 IPv6; the client not listed',
    sizes: [10, 10000, 100000],
    target: '/1k.html',
    connections: 50,
    prepare: async (n) => ({ blacklist: blacklistEntries(n) })
  },
  {
    name: 'users',
    what: '`users` (SHA-256), a Basic-auth request for one of them',
    sizes: [10, 10000],
    target: '/private/1k.html',
    connections: 50,
    headers: { Authorization: 'Basic ' + Buffer.from('user-5:secret-5').toString('base64') },
    prepare: async (n) => ({
      users: await userRecords(n),
      nonStandardCodes: [{ regex: '/^\\/private\\//', scode: 401 }]
    })
  },
  {
    name: 'listing',
    what: 'files in a listed directory',
    sizes: [200, 20000],
    target: (n) => '/curve-list-' + n + '/',
    connections: 20,
    prepare: async (n, rowDir, site) => {
      await listedDirectory(path.join(site.webroot, 'curve-list-' + n), n)
      return {}
    }
  },
  {
    name: 'mods',
    what: 'SVR.JS 3.x mods (.tar.gz) that hand every request on',
    sizes: [0, 5, 20],
    target: '/1k.html',
    connections: 50,
    prepare: async (n, rowDir) => {
      await passThroughMods(path.join(rowDir, 'mods'), n)
      return {}
    }
  }
]

const SECTIONS = ['blog', 'news', 'products', 'docs', 'shop', 'forum', 'wiki', 'media', 'api/v1', 'legacy']

/**
 * n rules of the kinds SVR.JS sites carry: moved pages and sections
 * (anchored, with a literal prefix) and 1% (at least one) without one.
 * @param {number} n
 * @returns {object[]}
 */
function rewriteRules (n) {
  const unprefixed = Math.max(1, Math.round(n / 100))
  const rules = []
  for (let i = 0; i < n; i++) {
    if (i % Math.ceil(n / unprefixed) === Math.ceil(n / unprefixed) - 1) {
      rules.push({ definingRegex: `/\\/old-${i}\\.(?:php|asp)$/`, replacements: [{ regex: `/\\/old-${i}\\.(?:php|asp)$/`, replacement: `/page-${i}.html` }] })
      continue
    }
    const section = SECTIONS[i % SECTIONS.length].replace('/', '\\/')
    switch (i % 3) {
      case 0:
        rules.push({ definingRegex: `/^\\/${section}\\/post-${i}(?:\\/|$)/`, replacements: [{ regex: `/^\\/${section}\\/post-${i}/`, replacement: `/${section}/articles/${i}` }] })
        break
      case 1:
        rules.push({ definingRegex: `/^\\/${section}-${i}\\/(.*)$/`, replacements: [{ regex: `/^\\/${section}-${i}\\/(.*)$/`, replacement: `/${section}/$1?from=${i}` }] })
        break
      default:
        rules.push({ definingRegex: `/^\\/item\\.php\\?id=${i}(?:&|$)/`, replacements: [{ regex: '/^.*$/', replacement: `/items/${i}.html` }] })
    }
  }
  return rules
}

function vhostEntries (n) {
  const entries = []
  for (let i = 0; i < n; i++) {
    const host = i % 10 === 9 ? `*.tenant-${i}.example.net` : `site-${i}.example.com`
    entries.push({ host, headers: { 'X-Site': String(i), 'Cache-Control': 'max-age=60' } })
  }
  return entries
}

/**
 * n entries as a fail2ban-fed list grows: single addresses and /24 ranges
 * in 10.0.0.0/8 and 172.16.0.0/12, and 1 in 20 an IPv6 address or /64.
 * @param {number} n
 * @returns {string[]}
 */
function blacklistEntries (n) {
  const entries = []
  for (let i = 0; i < n; i++) {
    if (i % 20 === 19) {
      entries.push(i % 40 === 39 ? `2001:db8:${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}::/64` : `2001:db8::${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}`)
    } else if (i % 4 === 3) {
      entries.push(`172.${16 + ((i >> 16) & 15)}.${(i >> 8) & 255}.0/24`)
    } else {
      entries.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`)
    }
  }
  return entries
}

async function userRecords (n) {
  const records = []
  for (let i = 0; i < n; i++) {
    // One real record; the others differ only in name, which is what the lookup sees.
    if (i === 0) records.push(await createUserRecord('user-5', 'secret-5', 'sha256'))
    else records.push({ ...records[0], name: 'user-' + (i === 5 ? 0 : i) })
  }
  return records
}

async function listedDirectory (dir, n) {
  await fs.mkdir(dir, { recursive: true })
  const width = String(n).length
  const names = Array.from({ length: n }, (_, i) => `file-${String(i).padStart(width, '0')}.txt`)
  // A few hundred at a time: every file is an open and a close.
  for (let i = 0; i < names.length; i += 256) {
    await Promise.all(names.slice(i, i + 256).map((name, j) => fs.writeFile(path.join(dir, name), 'entry ' + (i + j) + '\n')))
  }
}

const PASS_THROUGH_MOD = `function Mod () {}
Mod.prototype.callback = function (req, res, serverconsole, responseEnd, href, ext, uobject, search,
  defaultpage, users, page404, head, foot, fd, elseCallback) {
  return function () {
    elseCallback()
  }
}
module.exports = Mod
`

async function passThroughMods (modsDir, n) {
  if (n === 0) return
  await fs.mkdir(modsDir, { recursive: true })
  const src = path.join(modsDir, '..', 'mod-src')
  await fs.mkdir(src, { recursive: true })
  await fs.writeFile(path.join(src, 'index.js'), PASS_THROUGH_MOD)
  for (let i = 0; i < n; i++) {
    await fs.writeFile(path.join(src, 'mod.info'), JSON.stringify({ name: 'pass-' + i, version: '1.0.0' }))
    await tar.c({ gzip: true, file: path.join(modsDir, `${String(i).padStart(2, '0')}-pass.tar.gz`), cwd: src }, ['index.js', 'mod.info'])
  }
  await fs.rm(src, { recursive: true, force: true })
}

/**
 * Write the directory of one row: config.json (the site's, with the
 * dimension's keys) and serverSideScript.js beside it, and its mods.
 * @returns {Promise<string>} the config file
 */
async function writeRow (dimension, n, site, dir) {
  const rowDir = path.join(dir, `curve-${dimension.name}-${n}-${crypto.randomBytes(3).toString('hex')}`)
  await fs.mkdir(rowDir, { recursive: true })
  const base = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
  const keys = await dimension.prepare(n, rowDir, site)
  const configFile = path.join(rowDir, 'config.json')
  await fs.writeFile(configFile, JSON.stringify({ ...base, ...keys }))
  await fs.copyFile(site.scriptFile, path.join(rowDir, 'serverSideScript.js'))
  return configFile
}

module.exports = { DIMENSIONS, writeRow, rewriteRules, vhostEntries, blacklistEntries }
