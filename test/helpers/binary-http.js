'use strict'

const http = require('node:http')

/**
 * One HTTP request with an exact target whose body is kept as bytes, for
 * compressed and ranged responses (test/helpers/http.js decodes it as text).
 * @param {number} port
 * @param {string} target request target, sent as is
 * @param {{method?: string, headers?: object, timeout?: number}} [opts]
 * @returns {Promise<{status: number, headers: object, body: Buffer}>}
 */
function requestBytes (port, target, opts = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: target,
      method: opts.method || 'GET',
      headers: opts.headers,
      agent: false
    }, (res) => {
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.setTimeout(opts.timeout || 10000, () => req.destroy(new Error('request timed out: ' + target)))
    req.on('error', reject)
    req.end()
  })
}

module.exports = { requestBytes }
