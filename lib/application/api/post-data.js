'use strict'

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { UPLOADS_TEMP_PREFIX } = require('../../config/server-root')

/**
 * SVR.JS's `parsePostData([formidableOptions], callback)`: parses a POST
 * body (urlencoded, multipart or JSON) and calls `callback(fields, files)`
 * — the shape SVR.JS 3.x code used, not the `(err, …)` its website showed.
 * Single values come as plain values, as formidable 2 (bundled with SVR.JS)
 * gave them. Uploads go to a directory private to this worker and are
 * removed once the response is over, unless the script chose `uploadDir`.
 * @param {object} options runtime options
 * @param {object} shared per-worker services
 * @returns {(req, res, ctx) => (formOptions?: object, callback: Function) => void}
 */
function createPostDataParser (options, shared) {
  const { config } = options
  const uploadDir = makeUploadDir()

  return function parsePostDataFor (req, res, ctx) {
    return function parsePostData (formOptions, callback) {
      if (typeof formOptions === 'function') {
        callback = formOptions
        formOptions = {}
      }
      if (req.method !== 'POST') {
        shared.respond.sendError(ctx, 405, { headers: { Allow: 'POST' } })
        return
      }
      const settings = formSettings(config, formOptions || {}, uploadDir)
      const limit = bodyLimit(req, settings)
      let failed = false
      function fail (status, err) {
        if (failed) return
        failed = true
        // The rest of the body is not read: close the connection after the answer.
        res.shouldKeepAlive = false
        shared.respond.sendError(ctx, status, { error: err })
        req.unpipe()
        req.resume()
      }
      const declared = Number(req.headers['content-length'])
      if (declared > limit) {
        fail(413)
        return
      }
      // Loaded on the first body parsed: most workers never parse one.
      const form = require('formidable').formidable(settings)
      // formidable buffers urlencoded and JSON bodies whole, whatever its
      // size options say, so the body is counted here as well. Not by a
      // 'data' listener of our own: it would start the body flowing while
      // formidable is still setting up, and the first chunks would be lost.
      form.on('progress', (received) => {
        if (received > limit) fail(413)
      })
      if (settings.uploadDir === uploadDir) res.once('close', () => removeUploads(form))
      form.parse(req, (err, fields, files) => {
        if (failed) return
        if (err) {
          fail(err.httpCode >= 400 && err.httpCode < 600 ? err.httpCode : 400, err)
          return
        }
        callback(singleValues(fields), singleValues(files))
      })
    }
  }
}

// The configured limits are a ceiling a script can lower but not raise.
function formSettings (config, formOptions, uploadDir) {
  return {
    allowEmptyFiles: true,
    minFileSize: 0,
    uploadDir,
    ...formOptions,
    maxFileSize: Math.min(formOptions.maxFileSize ?? Infinity, config.maxUploadSize),
    maxTotalFileSize: Math.min(formOptions.maxTotalFileSize ?? Infinity, config.maxUploadSize),
    maxFieldsSize: Math.min(formOptions.maxFieldsSize ?? Infinity, config.maxFormFieldsSize)
  }
}

// Multipart bodies carry files and fields plus part headers; other bodies
// are all fields.
const MULTIPART_OVERHEAD = 64 * 1024

function bodyLimit (req, settings) {
  const type = String(req.headers['content-type'] || '')
  return type.startsWith('multipart/')
    ? settings.maxTotalFileSize + settings.maxFieldsSize + MULTIPART_OVERHEAD
    : settings.maxFieldsSize
}

function singleValues (record) {
  const result = {}
  for (const name of Object.keys(record)) {
    const value = record[name]
    result[name] = Array.isArray(value) && value.length === 1 ? value[0] : value
  }
  return result
}

function removeUploads (form) {
  for (const file of form.openedFiles || []) {
    if (file.filepath) fs.unlink(file.filepath, ignore)
  }
}

function ignore () {}

let uploadDir = null

/**
 * One private (mkdtemp makes it 0700) upload directory per process, made at
 * boot and removed when the process exits; the in-process worker that a
 * reload starts with --single-threaded keeps using it.
 * @returns {string}
 */
function makeUploadDir () {
  if (uploadDir !== null) return uploadDir
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), UPLOADS_TEMP_PREFIX + process.pid + '-'))
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }))
  uploadDir = dir
  return dir
}

module.exports = { createPostDataParser, singleValues }
