'use strict'

const fs = require('node:fs/promises')
const { pipeline } = require('node:stream')
const { checkPreconditions } = require('./conditional')
const { statusForFsError } = require('./fs-errors')
const { strongEtag } = require('./etag')

/**
 * Send a file in a content coding: its precompressed sidecar, or the file
 * through a zlib encoder. Never a range (ranges are served from the
 * identity representation); without a sidecar the length is not known in
 * advance, so the body is sent chunked without Content-Length.
 * @param {import('node:http').IncomingMessage} req GET or HEAD
 * @param {import('node:http').ServerResponse} res
 * @param {object} rep
 * @param {{name: string, etagSuffix: string, createEncoder: Function}} rep.coding
 * @param {string} rep.file the file as stored
 * @param {import('node:fs').Stats} rep.stat its stats
 * @param {{path: string, stat: import('node:fs').Stats} | null} rep.sidecar
 * @param {string} rep.contentType the file's own Content-Type
 * @param {boolean} rep.etag whether to send an ETag
 * @returns {Promise<number>} 0 once the response is under way, or the error
 *   status to answer with (412, or a file system error), before anything was sent
 */
async function sendCoded (req, res, rep) {
  const { coding, sidecar } = rep
  // A sidecar is its own representation: its bytes, its validators.
  const source = sidecar === null ? rep.stat : sidecar.stat
  const status = startCoded(req, res, rep, source, sidecar === null ? -1 : sidecar.stat.size)
  if (status !== -1) return status
  if (req.method === 'HEAD') {
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
  if (sidecar === null) pipeline(input, coding.createEncoder(), res, ignoreAbort)
  else pipeline(input, res, ignoreAbort)
  return 0
}

/**
 * Send a coded representation held in memory (see file-body-cache.js): the
 * same validators and headers as sendCoded, with a Content-Length.
 * @param {import('node:http').IncomingMessage} req GET or HEAD
 * @param {import('node:http').ServerResponse} res
 * @param {{coding: object, stat: import('node:fs').Stats, contentType: string, etag: boolean}} rep
 * @param {Buffer} body the coded bytes of the file with those stats
 * @returns {number} 0 once answered, or 412 (nothing sent yet)
 */
function sendCodedBody (req, res, rep, body) {
  const status = startCoded(req, res, rep, rep.stat, body.length)
  if (status !== -1) return status
  res.end(req.method === 'HEAD' ? undefined : body)
  return 0
}

// Validators, preconditions and headers of a coded representation.
// Returns -1 when the body is to follow, else what sendCoded returns.
function startCoded (req, res, rep, source, length) {
  const etag = rep.etag ? strongEtag(source, rep.coding.etagSuffix) : null
  const modified = source.mtime
  if (etag !== null) res.setHeader('ETag', etag)
  res.setHeader('Last-Modified', modified.toUTCString())
  const precondition = checkPreconditions(req.headers, etag, Math.floor(modified.getTime() / 1000) * 1000)
  if (precondition === 412) return 412
  if (precondition === 304) {
    res.statusCode = 304
    res.end()
    return 0
  }
  res.setHeader('Content-Type', rep.contentType)
  res.setHeader('Content-Encoding', rep.coding.name)
  if (length !== -1) res.setHeader('Content-Length', length)
  return -1
}

// pipeline() has destroyed every stream by then: a client that went away
// needs nothing more, and a read error mid-body can only cut the response.
function ignoreAbort () {}

module.exports = { sendCoded, sendCodedBody }
