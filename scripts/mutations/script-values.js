'use strict'

// Mutations of the area 'script-values' (see scripts/mutations.js for the
// fields): a serverSideScript.js is handed only the values its text names
// (lib/application/used-names.js, lib/application/api/legacy-api.js); one
// that can reach them without naming them must get all of them.

const DYNAMIC_ACCESS = 'const DYNAMIC_ACCESS = /\\beval\\b|\\barguments\\b|\\\\u/'

module.exports = [
  {
    area: 'script-values',
    file: 'lib/application/used-names.js',
    what: 'a script that calls eval is handed only the values it names',
    find: DYNAMIC_ACCESS,
    replace: 'const DYNAMIC_ACCESS = /\\barguments\\b|\\\\u/',
    tests: ['test/unit/used-names.test.js', 'test/http/script.test.js']
  },
  {
    area: 'script-values',
    file: 'lib/application/used-names.js',
    what: 'a script that reads arguments is handed only the values it names',
    find: DYNAMIC_ACCESS,
    replace: 'const DYNAMIC_ACCESS = /\\beval\\b|\\\\u/',
    tests: ['test/unit/used-names.test.js', 'test/http/script.test.js']
  },
  {
    area: 'script-values',
    file: 'lib/application/used-names.js',
    what: 'a name spelled with a \\u escape is not seen',
    find: DYNAMIC_ACCESS,
    replace: 'const DYNAMIC_ACCESS = /\\beval\\b|\\barguments\\b/',
    tests: ['test/unit/used-names.test.js', 'test/http/script.test.js']
  },
  {
    area: 'script-values',
    file: 'lib/application/api/legacy-api.js',
    what: 'the script\'s redirect is asked for under another name, so a script that names it gets none',
    find: "const wantsRedirect = uses.has('redirect')",
    replace: "const wantsRedirect = uses.has('redirects')",
    tests: ['test/http/script.test.js']
  }
]
