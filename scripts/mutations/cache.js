'use strict'

// Mutations of the area 'cache' (see scripts/mutations.js for the fields).

const CACHE = 'test/traffic/cache.test.js'
const POLICY = 'test/unit/cache-policy.test.js'
const BUDGET = 'test/unit/cache-budget.test.js'

module.exports = [
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'an answer that sets a cookie is stored',
    find: "  if (res.headers['set-cookie'] !== undefined) return refuse('sets a cookie')\n",
    replace: '',
    tests: [POLICY, CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'a request with a cookie or credentials gets a stored answer that is not public',
    find: "if ((req.headers.authorization !== undefined || req.headers.cookie !== undefined) && !publicAnswer) {",
    replace: 'if (false) {',
    tests: [POLICY, CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'variants keyed without the values of the fields they vary on',
    find: "key += '\\n' + name + ':' + (value === undefined ? '' : Array.isArray(value) ? value.join(',') : String(value).trim())",
    replace: "key += '\\n' + name",
    tests: [POLICY, CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/worker-cache.js',
    what: 'every miss fetches: no fill lock',
    find: "return this.coordinator.request('cache-fill', { key }, { timeout: this.lockTimeout + FILL_MARGIN_MS }).then(",
    replace: "return Promise.resolve('fill').then(",
    tests: [CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/fill-locks.js',
    what: 'every stale hit refreshes: the background fill ignores the lock',
    find: "    if (this.locks.has(key)) return 'busy'\n",
    replace: '',
    tests: [CACHE]
  },
  {
    area: 'cache',
    file: 'lib/proxy/cached-forward.js',
    what: 'a failed upstream gets the error page though a stale entry may stand in',
    find: "if (stale !== null && entryState(stale.entry.meta, Date.now()) !== 'expired') {",
    replace: 'if (false) {',
    tests: [CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/budget.js',
    what: 'hits do not keep an entry from eviction',
    find: '    for (const key of keys) this.entries.get(key)\n',
    replace: '',
    tests: [BUDGET]
  }
]
