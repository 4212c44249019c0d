'use strict'

const send = require('send')

const INDEX_FILES = ['index.html', 'index.htm', 'index.xhtml']

/**
 * Static files from the webroot through `send`, which owns ETag,
 * Last-Modified, conditional requests, ranges and HEAD.
 * @param {object} options runtime options
 * @returns {(req, res, ctx) => Promise<boolean>}
 */
function createStaticStage (options) {
  const sendOptions = Object.freeze({
    root: options.config.wwwroot,
    index: INDEX_FILES,
    dotfiles: 'deny'
  })
  return function serveStatic (req, res, ctx) {
    return new Promise((resolve) => {
      const stream = send(req, ctx.pathname, sendOptions)
      stream.on('error', (err) => {
        ctx.shared.respond.sendError(req, res, err.status || 500, { error: err })
        resolve(true)
      })
      stream.on('end', () => resolve(true))
      stream.on('headers', () => resolve(true))
      stream.pipe(res)
    })
  }
}

module.exports = { createStaticStage }
