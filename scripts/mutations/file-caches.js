'use strict'

// Mutations of the area 'file-caches' (see scripts/mutations.js for the
// fields): the count-bounded cache with a TTL that the file store's stat,
// index, sidecar and symlink caches and the error templates stand on.

const TIMED = ['test/unit/static-fs.test.js', 'test/unit/file-store-stats.test.js', 'test/unit/file-cache.test.js']

module.exports = [
  {
    area: 'file-caches',
    file: 'lib/util/timed-cache.js',
    what: 'an entry from the clock\'s future (the clock set back past it) is served until the clock catches up',
    find: '    return age >= 0 && age <= this.ttl\n',
    replace: '    return age <= this.ttl\n',
    tests: TIMED
  },
  {
    area: 'file-caches',
    file: 'lib/util/timed-cache.js',
    what: 'an entry is dropped at its ttl, one millisecond before lru-cache dropped it',
    find: '    return age >= 0 && age <= this.ttl\n',
    replace: '    return age >= 0 && age < this.ttl\n',
    tests: TIMED
  },
  {
    area: 'file-caches',
    file: 'lib/util/timed-cache.js',
    what: 'one entry fewer than max is kept',
    find: '    if (this.entries.size > this.max) ',
    replace: '    if (this.entries.size >= this.max) ',
    tests: TIMED
  },
  {
    area: 'file-caches',
    file: 'lib/util/timed-cache.js',
    what: 'an entry set again keeps its first place, and is the next one dropped',
    find: '    // Set again, it moves to the end: the order is by when it was taken.\n    this.entries.delete(key)\n',
    replace: '',
    tests: TIMED
  }
]
