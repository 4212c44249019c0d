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

/**
 * GET on `agent`; resolves with the status, headers, body, whether the
 * request went on a kept-alive connection, and that connection.
 * @param {number} port
 * @param {string} target
 * @param {http.Agent} agent
 * @returns {Promise<{status: number, headers: object, body: string, reused: boolean, socket: import('node:net').Socket}>}
 */
function agentGet (port, target, agent) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { body += chunk })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body, reused: req.reusedSocket, socket: req.socket }))
      res.on('error', reject)
    })
    req.setTimeout(5000, () => req.destroy(new Error('timed out')))
    req.on('error', reject)
  })
}

/**
 * A request answered while one worker is stopped (SIGSTOP): the primary may
 * have handed its connection to that worker before it knew it was stopped;
 * once one has waited there for a moment, the others get every connection.
 */
async function requestPastStopped (port, target) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request(port, target, { timeout: 1000 })
    } catch (err) {
      if (attempt === 3 || !/timed out/.test(err.message)) throw err
    }
  }
}

module.exports = { requestPastStopped, request, agentGet }
