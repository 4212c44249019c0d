'use strict'

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const path = require('node:path')
const { makeSite, startSvr } = require('../helpers/server')
const { request } = require('../helpers/http')
const net = require('node:net')

// Reports what parsePostData gave it, including whether the upload's temp
// file exists while the request runs.
const SCRIPT = `
disableEndElseCallbackExecute = true
if (href === '/form') {
  parsePostData(function (fields, files) {
    var upload = files.upload
    res.setHeader('Content-Type', 'application/json')
    res.end(JSON.stringify({
      fields: fields,
      file: upload ? { name: upload.originalFilename, size: upload.size, path: upload.filepath,
        content: fs.readFileSync(upload.filepath, 'utf8') } : null
    }))
  })
} else {
  elseCallback()
}
`

function multipart (parts) {
  const boundary = '----svrtest' + Math.random().toString(16).slice(2)
  const chunks = []
  for (const part of parts) {
    const disposition = 'form-data; name="' + part.name + '"' + (part.filename ? '; filename="' + part.filename + '"' : '')
    chunks.push('--' + boundary + '\r\nContent-Disposition: ' + disposition + '\r\n' +
      (part.filename ? 'Content-Type: application/octet-stream\r\n' : '') + '\r\n')
    chunks.push(part.value)
    chunks.push('\r\n')
  }
  chunks.push('--' + boundary + '--\r\n')
  return { body: Buffer.concat(chunks.map((c) => Buffer.from(c))), type: 'multipart/form-data; boundary=' + boundary }
}

describe('parsePostData', () => {
  const cleanups = []
  const hooks = { after: (fn) => cleanups.push(fn) }
  let svr
  before(async () => {
    const site = await makeSite(hooks, { workers: 1, maxUploadSize: 1000, maxFormFieldsSize: 200 })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    svr = await startSvr(hooks, site.configFile)
  })
  after(async () => {
    for (const fn of cleanups.reverse()) await fn()
  })

  it('should parse an urlencoded body into single values', async () => {
    const res = await request(svr.port, '/form', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=Ada+Lovelace&lang=en&lang=fr'
    })
    assert.equal(res.status, 200)
    assert.deepEqual(JSON.parse(res.body).fields, { name: 'Ada Lovelace', lang: ['en', 'fr'] })
  })

  it('should store an upload in a private directory and remove it after the response', async () => {
    const { body, type } = multipart([{ name: 'title', value: 'x' }, { name: 'upload', filename: 'a.txt', value: 'file content' }])
    const res = await request(svr.port, '/form', { method: 'POST', headers: { 'Content-Type': type }, body })
    assert.equal(res.status, 200)
    const data = JSON.parse(res.body)
    assert.deepEqual(data.fields, { title: 'x' })
    assert.equal(data.file.name, 'a.txt')
    assert.equal(data.file.content, 'file content')
    assert.match(path.basename(path.dirname(data.file.path)), /^svr-uploads-/)
    const stat = await fs.stat(path.dirname(data.file.path))
    assert.equal(stat.mode & 0o777, 0o700)
    // The file is unlinked once the response has closed.
    let gone = false
    for (let i = 0; i < 50 && !gone; i++) {
      gone = await fs.access(data.file.path).then(() => false, () => true)
      if (!gone) await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.ok(gone, 'upload removed')
  })

  it('should answer 413 for an upload or fields above the configured limits', async () => {
    const big = multipart([{ name: 'upload', filename: 'big.bin', value: 'x'.repeat(5000) }])
    const res = await request(svr.port, '/form', { method: 'POST', headers: { 'Content-Type': big.type }, body: big.body })
    assert.equal(res.status, 413, res.body)
    const fields = await request(svr.port, '/form', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'a=' + 'y'.repeat(500)
    })
    assert.equal(fields.status, 413, fields.body)
    // Without Content-Length the body is counted as it arrives.
    const chunked = await request(svr.port, '/form', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
      body: 'a=' + 'z'.repeat(5000)
    })
    assert.equal(chunked.status, 413)
  })

  it('should answer 405 with Allow: POST to other methods', async () => {
    const res = await request(svr.port, '/form')
    assert.equal(res.status, 405)
    assert.equal(res.headers.allow, 'POST')
  })

  it('should answer 400 for a malformed multipart body', async () => {
    const res = await request(svr.port, '/form', {
      method: 'POST',
      headers: { 'Content-Type': 'multipart/form-data; boundary=abc' },
      body: 'this is not multipart'
    })
    assert.equal(res.status, 400)
  })
})

// Without the trailing-slash stage's stat, the script runs in the very tick
// the request arrives, before formidable has attached to the body: no chunk
// may be lost in between.
describe('parsePostData called in the tick the request arrives', () => {
  const cleanups = []
  const hooks = { after: (fn) => cleanups.push(fn) }
  let svr

  before(async () => {
    const site = await makeSite(hooks, { workers: 1, maxUploadSize: 1000, maxFormFieldsSize: 200, disableTrailingSlashRedirects: true })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), SCRIPT)
    svr = await startSvr(hooks, site.configFile)
  })

  after(async () => {
    for (const fn of cleanups.reverse()) await fn()
  })

  it('should parse multipart and urlencoded bodies, and still count them', async () => {
    for (let i = 0; i < 3; i++) {
      const { body, type } = multipart([{ name: 'title', value: 'x' + i }, { name: 'upload', filename: 'a.txt', value: 'content ' + i }])
      const res = await request(svr.port, '/form', { method: 'POST', headers: { 'Content-Type': type }, body })
      assert.equal(res.status, 200, res.body)
      const data = JSON.parse(res.body)
      assert.deepEqual(data.fields, { title: 'x' + i })
      assert.equal(data.file.content, 'content ' + i)
    }
    const fields = await request(svr.port, '/form', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Transfer-Encoding': 'chunked' },
      body: 'a=' + 'z'.repeat(5000)
    })
    assert.equal(fields.status, 413)
  })
})

// A client that ends its side of the connection halfway through a body
// will never send the rest; Node neither ends nor aborts such a request.
describe('a request body the client abandons halfway', () => {
  it('should abort the request, so a script reading the body does not wait for ever, and keep serving', async (t) => {
    const site = await makeSite(t, { workers: 1, logDirectory: 'log' })
    await fs.writeFile(path.join(site.dir, 'serverSideScript.js'), `
if (href === '/upload') {
  var received = 0
  req.on('data', function (chunk) { received += chunk.length })
  req.on('end', function () { res.end('got ' + received) })
  req.on('aborted', function () { serverconsole.errmessage('upload aborted after ' + received + ' bytes') })
  return
}
`)
    const svr = await startSvr(t, site.configFile)
    const closed = await new Promise((resolve, reject) => {
      const socket = net.connect(svr.port, '127.0.0.1', () => {
        socket.write('POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n' + 'a'.repeat(5000))
        // A moment later, the client sends FIN without the rest.
        setTimeout(() => socket.end(), 200)
      })
      let answer = ''
      socket.on('data', (chunk) => { answer += chunk })
      socket.on('close', () => resolve(answer))
      socket.on('error', reject)
      socket.setTimeout(20000, () => socket.destroy(new Error('the connection of an abandoned body stayed open')))
    })
    assert.equal(closed, '', 'no answer: the request was aborted')
    await svr.waitFor(/upload aborted after 5000 bytes/, 10000)
    assert.equal((await request(svr.port, '/upload', { method: 'POST', body: 'abc' })).body, 'got 3')
  })
})
