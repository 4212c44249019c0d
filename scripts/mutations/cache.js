'use strict'

// Mutations of the area 'cache' (see scripts/mutations.js for the fields).

const CACHE = 'test/traffic/cache.test.js'
const POLICY = 'test/unit/cache-policy.test.js'
const BUDGET = 'test/unit/cache-budget.test.js'
const VALIDATION = 'test/traffic/cache-validation.test.js'
const APP = 'test/traffic/cache-app.test.js'
const ADMIN = 'test/traffic/cache-admin.test.js'
const PURGE = 'test/unit/cache-purge.test.js'
const LOCKS = 'test/unit/cache-fill-locks.test.js'

module.exports = [
  {
    area: 'cache',
    file: 'lib/cache/worker-cache.js',
    what: 'a worker serves the old entry of a URL it just passed a POST for, until the primary\'s purge arrives',
    find: '    this.invalidated.set(base, Date.now())\n',
    replace: '',
    tests: ['test/unit/cache-worker-invalidate.test.js']
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'a hit sends the upstream\'s Age as it was when stored',
    find: '    headers: withoutAge(headers),\n',
    replace: '    headers,\n',
    tests: [VALIDATION]
  },
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
    find: "return this.coordinator.request('cache-fill', { key, missedAt }, { timeout: this.lockTimeout + FILL_MARGIN_MS }).then(",
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
    find: "    const stale = this.usableStale()\n    if (stale !== null) {",
    replace: '    const stale = null\n    if (stale !== null) {',
    tests: [CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/budget.js',
    what: 'hits do not keep an entry from eviction',
    find: '    for (const key of keys) this.entries.get(key)\n',
    replace: '',
    tests: [BUDGET]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer.js',
    what: 'If-Range ignored: a range of a changed answer is sent as a part of the stored one',
    find: '  if (ifRange === undefined) return true\n',
    replace: '  return true\n',
    tests: [VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer.js',
    what: 'Content-Range counts the end one past the last byte sent',
    find: "'bytes ' + range.start + '-' + range.end + '/'",
    replace: "'bytes ' + range.start + '-' + (range.end + 1) + '/'",
    tests: [VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'a fill asks without the stored validators: no 304 revalidation',
    find: "  if (validators['if-none-match'] !== undefined) headers['if-none-match'] = validators['if-none-match']\n",
    replace: '',
    tests: [POLICY, VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'must-revalidate answers served stale',
    find: "cc.has('no-cache') || cc.has('must-revalidate') ||",
    replace: "cc.has('no-cache') ||",
    tests: [POLICY, VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/proxy/cached-forward.js',
    what: 'an upstream 5xx relayed while a stale entry could stand in',
    find: '    if (STALE_IF_ERROR_STATUSES.has(statusCode) && this.usableStale() !== null) {',
    replace: '    if (false) {',
    tests: [VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/proxy/cached-forward.js',
    what: 'a POST answered from the GET\'s entry',
    find: "  if (req.method === 'GET' || req.method === 'HEAD') return forwardReading(",
    replace: '  return forwardReading(',
    tests: [CACHE]
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'a 206 stored as the whole answer',
    find: "  if (res.status === 206) return refuse('partial content')\n",
    replace: '',
    tests: [POLICY]
  },
  {
    area: 'cache',
    file: 'lib/pipeline/stages/cache-purge.js',
    what: 'PURGE allowed from whoever X-Forwarded-For names as local',
    find: '  return isLocalClient(peer) && isLocalClient(client)\n',
    replace: '  return isLocalClient(client)\n',
    tests: [PURGE, ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/pipeline/stages/cache-purge.js',
    what: 'PURGE allowed from anyone a local reverse proxy forwards',
    find: '  return isLocalClient(peer) && isLocalClient(client)\n',
    replace: '  return isLocalClient(peer)\n',
    tests: [PURGE, ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/cache/purge-target.js',
    what: 'a prefix purge removes only the exact URL',
    find: '  if (prefix) return (key) => key.startsWith(base)\n',
    replace: '',
    tests: [PURGE, ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/cache/service.js',
    what: 'evictions counted before the check: purged entries count as evicted',
    find: '    if (overBudget) this.removed.evicted++\n',
    replace: '    this.removed.evicted++\n',
    tests: [PURGE, ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/cache/fill-locks.js',
    what: 'a fill counted as ended by a worker that no longer held it',
    find: "    if (lock === undefined || lock.holder !== who) return\n    this.clearTimer(lock.timer)\n    this.locks.delete(key)\n    this.counts[stored ? 'stored' : 'unstored']++\n",
    replace: "    this.counts[stored ? 'stored' : 'unstored']++\n    if (lock === undefined || lock.holder !== who) return\n    this.clearTimer(lock.timer)\n    this.locks.delete(key)\n",
    tests: [LOCKS]
  },
  {
    area: 'cache',
    file: 'lib/cache/service.js',
    what: 'workers told to drop an entry before its file is gone (a worker may read it back)',
    find: "    return Promise.all(removals).then(() => {\n      for (const { peer } of coordinator.targets()) if (peer !== null) peer.notify('cache-drop', { keys })\n    })\n",
    replace: "    for (const { peer } of coordinator.targets()) if (peer !== null) peer.notify('cache-drop', { keys })\n    return Promise.all(removals)\n",
    tests: [PURGE]
  },
  {
    area: 'cache',
    file: 'lib/cache/service.js',
    what: 'purgeOnReload ignored',
    find: 'settings.purgeOnReload && this.budget !== null ? this.purgeOnReload()',
    replace: 'false ? this.purgeOnReload()',
    tests: [PURGE, ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/metrics/query.js',
    what: 'the primary\'s cache series left out of the metrics',
    find: '...coordinator.cache.metrics(), ',
    replace: '',
    tests: [ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer-capture.js',
    what: 'an HTTP/2 answer kept twice over: end() and the write() it calls both keep its chunk',
    find: '      if (!capture.inEnd) capture.keep(chunk, encoding)\n',
    replace: '      capture.keep(chunk, encoding)\n',
    tests: [APP]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer-capture.js',
    what: 'the filling request\'s X-Request-Id stored and repeated to every hit',
    find: "const PER_REQUEST_FIELDS = ['x-request-id', 'cache-status', 'date']",
    replace: "const PER_REQUEST_FIELDS = ['cache-status', 'date']",
    tests: [APP]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer-capture.js',
    what: 'the fields given to writeHead left out of what is stored',
    find: '        else if (fields !== null) for (const name of Object.keys(fields)) this.setHeader(name, fields[name])\n        if (capture.begin(this, status)) return this\n        return original.writeHead.call(this, status, ...rest, ...(Array.isArray(fields) ? [fields] : []))',
    replace: '        if (capture.begin(this, status)) return this\n        return original.writeHead.call(this, status, ...rest, ...(fields === null ? [] : [fields]))',
    tests: [APP]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer-capture.js',
    what: 'a script\'s 500 relayed while a stale entry could stand in',
    find: '    if (STALE_IF_ERROR_STATUSES.has(status) && stale !== null && Date.now() < stale.meta.staleIfErrorUntil) {',
    replace: '    if (false) {',
    tests: [APP]
  },
  {
    area: 'cache',
    file: 'lib/pipeline/stages/app-cache.js',
    what: 'every miss runs the script: no fill lock for application answers',
    find: '  const verdict = await cache.fill(found.key, found.at)\n',
    replace: "  const verdict = 'fill'\n",
    tests: [APP]
  },
  {
    area: 'cache',
    file: 'lib/cache/policy.js',
    what: 'an answer whose Content-Length is over maxEntrySize said to be stored',
    find: '  return Number.isFinite(length) && length > max\n',
    replace: '  return false\n',
    tests: [VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/cache/service.js',
    what: 'entries of an earlier run left out of the budget: over maxSize and out of reach of purges',
    find: '    this.adopted = this.adoptEarlier(this.store, this.budget)\n',
    replace: '',
    tests: [ADMIN]
  },
  {
    area: 'cache',
    file: 'lib/cache/answer.js',
    what: 'a failed POST drops the stored answer too (no check of the status)',
    find: '    if (res.statusCode < 400) cache.invalidate(base)\n',
    replace: '    cache.invalidate(base)\n',
    tests: [VALIDATION]
  },
  {
    area: 'cache',
    file: 'lib/proxy/cached-forward.js',
    what: 'a stored answer outlives a successful POST or DELETE to its URL',
    find: '  invalidateAfter(req, res, env.cache, baseKey(ctx.hostname, ctx.pathname + ctx.search))\n',
    replace: '',
    tests: [VALIDATION]
  }
]
