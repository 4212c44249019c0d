'use strict'

// Virtual-host entries found through the host index must be the entry the
// loop over every entry finds: the first whose host and ip fit.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const { HostIndex } = require('../../lib/hosts/host-index')
const { entry, hostname, local, entryFits } = require('../helpers/vhost-arbitraries')

const RUNS = 3000

function naiveFirst (entries, host, localAddress) {
  return entries.findIndex((e) => entryFits(e, host, localAddress))
}

describe('HostIndex', () => {
  it('should find the entry the loop over every entry finds, for any entries and request', () => {
    fc.assert(fc.property(fc.array(entry, { maxLength: 12 }), fc.array(fc.tuple(hostname, local), { minLength: 1, maxLength: 8 }), (entries, requests) => {
      const index = new HostIndex(entries)
      for (const [host, localAddress] of requests) {
        assert.equal(index.first(host, localAddress), naiveFirst(entries, host, localAddress), `${host} ${localAddress} in ${JSON.stringify(entries)}`)
      }
    }), { numRuns: RUNS })
  })

  it('should let an earlier wildcard or catch-all entry win over a later exact one', () => {
    const index = new HostIndex([
      { host: 'a.example.com', ip: '192.0.2.1' },
      { host: '*.example.com' },
      { host: 'a.example.com' },
      { host: 'b.example.com' },
      {}
    ])
    assert.equal(index.first('a.example.com', '127.0.0.1'), 1)
    assert.equal(index.first('a.example.com', '192.0.2.1'), 0)
    assert.equal(index.first('example.com', '127.0.0.1'), 1)
    assert.equal(index.first('b.example.org', '127.0.0.1'), 4)
  })
})
