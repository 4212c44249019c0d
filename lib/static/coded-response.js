'use strict'

const fs = require('node:fs/promises')
const { pipeline } = require('node:stream')
const { checkPreconditions } = require('./conditional')
const { statusForFsError } = require('./fs-errors')
const { strongEtag } = require('./etag')
const { headForWrappers } = require('../pipeline/request/tolerant-response')

/**
 * Send a file in a content coding: its precompressed sidecar, or the file
 * through a zlib encoder. Never a range (ranges are served from the
 * identity representation); without a sidecar the length is not known in
 * advance, so the body is sent chunked without Content-Length.
 * @param {import('node:http').IncomingMessage} req GET or HEAD
 * @param {import('node:http').ServerResponse} res
 * @param {import('../file-store/representation').Representation} rep with
 *   `coding`, the file's own Content-Type as `negotiable`, and a `sidecar` or null
 * @param {boolean} etags whether to send an ETag
 * @returns {Promise<number>} 0 once the response is under way, or the error
 *   status to answer with (412, or a file system error), before anything was sent
 */
async function sendCoded (req, res, rep, etags) {
  const { coding, sidecar } = rep
  // A sidecar is its own representation: its bytes, its validators.
  const source = sidecar === null ? rep.stat : sidecar.stat
  const status = startCoded(req, res, rep, etags, source, sidecar === null ? -1 : sidecar.stat.size)
  if (status !== -1) return status
  if (req.method === 'HEAD') {
    headForWrappers(res)
    res.end()
    return 0
  }
  let handle
  try {
    handle = await fs.open(sidecar === null ? rep.file : sidecar.path, 'r')
  } catch (err) {
    return statusForFsError(err)
  }
  const input = handle.createReadStream()
  headForWrappers(res)
  if (sidecar === null) pipeline(input, coding.createEncoder(), res, ignoreAbort)
  else pipeline(input, res, ignoreAbort)
  return 0
}

/**
 * Send a coded representation held in memory (see lib/file-store/bodies.js):
 * the same validators and headers as sendCoded, with a Content-Length.
 * @param {import('node:http').IncomingMessage} req GET or HEAD
 * @param {import('node:http').ServerResponse} res
 * @param {import('../file-store/representation').Representation} rep with
 *   `coding` and `body`, the coded bytes of the file with `stat`
 * @param {boolean} etags whether to send an ETag
 * @returns {number} 0 once answered, or 412 (nothing sent yet)
 */
function sendCodedBody (req, res, rep, etags) {
  const status = startCoded(req, res, rep, etags, rep.stat, rep.body.length)
  if (status !== -1) return status
  headForWrappers(res)
  res.end(req.method === 'HEAD' ? undefined : rep.body)
  return 0
}

// Validators, preconditions and headers of a coded representation.
// Returns -1 when the body is to follow, else what sendCoded returns.
function startCoded (req, res, rep, etags, source, length) {
  const etag = etags ? strongEtag(source, rep.coding.etagSuffix) : null
  const modified = source.mtime
  if (etag !== null) res.setHeader('ETag', etag)
  res.setHeader('Last-Modified', modified.toUTCString())
  const precondition = checkPreconditions(req.headers, etag, Math.floor(modified.getTime() / 1000) * 1000)
  if (precondition === 412) return 412
  if (precondition === 304) {
    res.statusCode = 304
    headForWrappers(res)
    res.end()
    return 0
  }
  res.setHeader('Content-Type', rep.negotiable)
  res.setHeader('Content-Encoding', rep.coding.name)
  if (length !== -1) res.setHeader('Content-Length', length)
  return -1
}

// pipeline() has destroyed every stream by then: a client that went away
// needs nothing more, and a read error mid-body can only cut the response.
function ignoreAbort () {}

module.exports = { sendCoded, sendCodedBody }
