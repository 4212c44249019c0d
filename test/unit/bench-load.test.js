'use strict'

// bench/load.js: a run that completes no request in its time, as the
// one-second runs of `bench --quick` can on a loaded machine, is tried
// again over a longer time instead of measuring 0 req/s.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { runLoad } = require('../../bench/load')

describe('bench load runs', () => {
  it('tries a run that completed no request again over a longer time', async (t) => {
    // Every answer takes 1.2 s: none within a one-second run.
    const server = http.createServer((req, res) => setTimeout(() => res.end('slow\n'), 1200))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.after(() => {
      server.closeAllConnections()
      server.close()
    })
    const result = await runLoad('autocannon', { url: 'http://127.0.0.1:' + server.address().port + '/', connections: 5, seconds: 1 })
    assert.ok(result.requests > 0, `requests: ${result.requests}`)
    assert.ok(result.rps > 0, `req/s: ${result.rps}`)
  })
})
