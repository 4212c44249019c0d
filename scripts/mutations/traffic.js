'use strict'

// Mutations of the area 'traffic' (see scripts/mutations.js for the fields).

const LIMITS = 'test/traffic/rate-limit.test.js'
const BUCKET = 'test/unit/rate-bucket.test.js'

module.exports = [
  {
    area: 'traffic',
    file: 'lib/traffic/bucket.js',
    what: 'the burst off by one: one request more than burst + 1 at once',
    find: 'if (excess > rule.burst) {',
    replace: 'if (excess > rule.burst + 1) {',
    tests: [BUCKET, LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/traffic/rules.js',
    what: 'nodelay ignored: every request beyond the rate waits',
    find: 'delay: entry.delay ?? Infinity',
    replace: 'delay: entry.delay ?? 0',
    tests: [LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/traffic/limiter.js',
    what: 'each worker alone: the primary\'s buckets never taken',
    find: '          state.tat = Math.max(state.tat, addAdmitted(shared.tats[i], state.unsent, rule.bucket.interval, now))\n',
    replace: '',
    tests: [LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/traffic/limiter.js',
    what: 'connections counted after the check: one request more than the limit in progress',
    find: 'state.active + state.othersActive >= rule.connections',
    replace: 'state.active + state.othersActive > rule.connections',
    tests: [LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/pipeline/stages/rate-limit.js',
    what: 'a dry run refuses',
    find: 'if (!verdict.admitted && !rule.dryRun) {',
    replace: 'if (!verdict.admitted) {',
    tests: [LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/traffic/rules.js',
    what: 'the allow list ignored',
    find: "keyOf: keyFunction(entry, compileAddressList(entry.allow) ?? never),",
    replace: 'keyOf: keyFunction(entry, never),',
    tests: [LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/traffic/shared-buckets.js',
    what: 'the primary keeps every key, so a key a worker dropped comes back with its old bucket',
    find: 'keys = new LRUCache({ max: rule.maxKeys })',
    replace: 'keys = new LRUCache({ max: 1000000 })',
    tests: [LIMITS]
  },
  {
    area: 'traffic',
    file: 'lib/pipeline/stages/rate-limit.js',
    what: 'a refused request is counted by the rules before the one that refused it',
    find: '      if (admitted === null) admitted = []\n      admitted.push(rule, key, state, verdict)\n',
    replace: '      limiter.admit(rule, key, state, verdict)\n      if (admitted === null) admitted = []\n      admitted.push(rule, key, state, verdict)\n',
    tests: [LIMITS]
  }
]
