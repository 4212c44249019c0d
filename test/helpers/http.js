'use strict'

const http = require('node:http')

/**
 * One HTTP request with an exact request target (no URL normalisation).
 * @param {number} port
 * @param {string} target request target, sent as is
 * @param {{method?: string, socketPath?: string, headers?: object, body?: string|Buffer, host?: string, agent?: http.Agent|false, timeout?: number}} [opts]
 * @returns {Promise<{status: number, headers: object, body: string}>}
 */
function request (port, target, opts = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: opts.host || '127.0.0.1',
      port,
      socketPath: opts.socketPath,
      path: target,
      method: opts.method || 'GET',
      headers: opts.headers,
      agent: opts.agent === undefined ? false : opts.agent
    }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    req.setTimeout(opts.timeout || 10000, () => req.destroy(new Error('request timed out: ' + target)))
    req.on('error', reject)
    req.end(opts.body)
  })
}

module.exports = { request }
