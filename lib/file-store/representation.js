'use strict'

/**
 * What the file store answers for a request: the file, its stats, the
 * content coding chosen and the bytes held in memory, or a refusal
 * (`status` not 0) before anything was sent. One shape for all, so that
 * V8 keeps the writer's property reads monomorphic.
 */
class Representation {
  /**
   * @param {string} file the file as stored
   * @param {string} urlPath the URL path it is served under (an index file's included)
   * @param {import('node:fs').Stats} stat the stats of the bytes to send
   */
  constructor (file, urlPath, stat) {
    this.status = 0
    this.error = null
    this.file = file
    this.urlPath = urlPath
    this.stat = stat
    // The file's Content-Type when the response varies with
    // Accept-Encoding (it may be coded), else null.
    this.negotiable = null
    // A CODINGS entry (lib/static/compression.js), null for identity.
    this.coding = null
    // {path, stat} of a precompressed sidecar file to send.
    this.sidecar = null
    // The bytes to send from memory (identity or coded), else null.
    this.body = null
    // The body cache's entry of an identity body, which memoizes its headers.
    this.held = null
  }
}

/**
 * @param {number} status the status to answer with instead
 * @param {Error|null} error what caused it, for the log and the error page
 * @returns {Representation} a refusal
 */
function refusal (status, error) {
  const rep = new Representation('', '', null)
  rep.status = status
  rep.error = error
  return rep
}

/**
 * Whether send would answer the whole file with a plain 200: no range and
 * no precondition to evaluate.
 * @param {object} headers request headers
 * @returns {boolean}
 */
function isPlainRequest (headers) {
  return headers.range === undefined && headers['if-none-match'] === undefined &&
    headers['if-modified-since'] === undefined && headers['if-match'] === undefined &&
    headers['if-unmodified-since'] === undefined
}

module.exports = { Representation, refusal, isPlainRequest }
