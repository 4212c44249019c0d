'use strict'

// The files every target serves, made fresh in a temp directory per run.

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')

const LISTING_ENTRIES = 200

// The same application code as bench/bare-cluster.js, in the SVR.JS form.
const SCRIPT = `if (href === '/hello') {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end('Hello World')
  return
}
if (href === '/fibonacci') {
  var n = Number(uobject.query.n)
  if (!Number.isInteger(n) || n < 0) {
    res.writeHead(400, { 'Content-Type': 'text/plain' })
    res.end('n must be a non-negative integer')
    return
  }
  var a = 0n
  var b = 1n
  for (var i = 0; i < Math.min(n, 100000); i++) {
    var next = a + b
    a = b
    b = next
  }
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(a.toString())
  return
}
`

/**
 * @param {string} dir an empty directory
 * @returns {Promise<{webroot: string, configFile: string, scriptFile: string}>}
 */
async function createSite (dir) {
  const webroot = path.join(dir, 'webroot')
  const list = path.join(webroot, 'list')
  await fs.mkdir(list, { recursive: true })
  await fs.writeFile(path.join(webroot, 'index.html'), '<!doctype html><title>bench</title><h1>bench</h1>\n')
  await fs.writeFile(path.join(webroot, '1k.html'), htmlOfSize(1024))
  await fs.writeFile(path.join(webroot, '1m.bin'), crypto.randomBytes(1024 * 1024))
  await fs.writeFile(path.join(webroot, '100k.txt'), textOfSize(100 * 1024))
  for (let i = 0; i < LISTING_ENTRIES; i++) {
    await fs.writeFile(path.join(list, `file-${String(i).padStart(3, '0')}.txt`), `entry ${i}\n`)
  }
  const scriptFile = path.join(dir, 'serverSideScript.js')
  await fs.writeFile(scriptFile, SCRIPT)
  const configFile = path.join(dir, 'config.json')
  await fs.writeFile(configFile, JSON.stringify({
    port: '127.0.0.1:0',
    wwwroot: webroot,
    workers: 2,
    enableDirectoryListing: true,
    // For experiments: BENCH_SVR_CONFIG='{"enableLogging":false}' npm run bench
    ...JSON.parse(process.env.BENCH_SVR_CONFIG || '{}')
  }, null, 2))
  return { webroot, configFile, scriptFile }
}

function htmlOfSize (size) {
  const head = '<!doctype html><title>1 KiB</title><p>'
  const tail = '</p>\n'
  return head + 'x'.repeat(size - head.length - tail.length) + tail
}

// Compressible but not trivially so: words in a pseudo-random order.
function textOfSize (size) {
  const words = ['server', 'request', 'response', 'header', 'worker', 'cluster', 'static', 'file', 'listing', 'cache']
  let seed = 1
  let text = ''
  while (text.length < size) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    text += words[seed % words.length] + (seed % 13 === 0 ? '\n' : ' ')
  }
  return text.slice(0, size)
}

module.exports = { createSite, LISTING_ENTRIES }
