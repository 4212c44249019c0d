'use strict'

const { execFile } = require('node:child_process')
const net = require('node:net')

/**
 * A free TCP port on 127.0.0.1, for a server that must be told its port
 * in advance (a reload that keeps it, an nginx upstream).
 * @returns {Promise<number>}
 */
function freePort () {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * @param {string} name a program looked up on PATH
 * @returns {Promise<boolean>} whether it is installed
 */
function hasCommand (name) {
  return new Promise((resolve) => execFile('sh', ['-c', 'command -v "$0"', name], (err) => resolve(!err)))
}

module.exports = { freePort, hasCommand }
