'use strict'

// Mutations of the area 'regexes' (see scripts/mutations.js for the fields):
// config regexes only asked whether they match lose a leading .*
// (lib/util/regex.js forMatchTest); one whose match is replaced stays whole.

module.exports = [
  {
    area: 'regexes',
    file: 'lib/util/regex.js',
    what: 'a sticky regex loses its leading .* too, so that it matches where it did not',
    find: '  if (regex.sticky || regex.global) return regex\n',
    replace: '  if (regex.global) return regex\n',
    tests: ['test/unit/regex.test.js']
  },
  {
    area: 'regexes',
    file: 'lib/util/regex.js',
    what: 'a leading .+ is dropped as if it were .*, so a match at the very start is found where none is',
    find: 'const LEADING_ANY_RUN = /^\\.\\*\\??(?![*+?{])/',
    replace: 'const LEADING_ANY_RUN = /^\\.[*+]\\??(?![*+?{])/',
    tests: ['test/unit/regex.test.js']
  },
  {
    area: 'regexes',
    file: 'lib/pipeline/stages/non-standard-codes.js',
    what: 'a nonStandardCodes location replaces the shortened regex\'s match, which starts elsewhere',
    find: 'let replaced = url.replace(rule.match.regex, rule.location)',
    replace: 'let replaced = url.replace(rule.match.tester, rule.location)',
    tests: ['test/http/non-standard-codes.test.js']
  },
  {
    area: 'regexes',
    file: 'lib/static/compression.js',
    what: 'dontCompress is never asked, so a path it names is compressed',
    find: '      if (urlPath.search(dontCompress[i]) !== -1) return null\n',
    replace: '',
    tests: ['test/http/compression.test.js']
  }
]
