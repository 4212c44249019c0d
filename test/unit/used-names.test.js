'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const vm = require('node:vm')
const fc = require('fast-check')
const { usedNames } = require('../../lib/application/used-names')

const NAMES = ['req', 'res', 'href', 'ext', 'uobject', 'redirect', 'responseEnd', 'checkHref']

function sorted (set) {
  return [...set].sort()
}

describe('usedNames(source, names)', () => {
  it('should give the names that appear as whole words, in code, comments and strings', () => {
    const source = [
      'if (href === "/x") res.end(ext)',
      '// responseEnd in a comment',
      'var s = "redirect"'
    ].join('\n')
    assert.deepEqual(sorted(usedNames(source, NAMES)), ['ext', 'href', 'redirect', 'res', 'responseEnd'])
  })

  it('should not take a longer identifier, or a name inside one, for the name', () => {
    assert.deepEqual(sorted(usedNames('var myuobject = hrefs + $req + req_ + ext2', NAMES)), [])
  })

  it('should take a property of the same name for the name', () => {
    assert.deepEqual(sorted(usedNames('obj.uobject = other.redirect', NAMES)), ['redirect', 'uobject'])
  })

  it('should give every name to a script that can reach its scope without naming it', () => {
    for (const source of ['eval("uobject")', 'var a = arguments[4]', 'f.caller.arguments', 'return \\u0075object']) {
      assert.deepEqual(sorted(usedNames(source, NAMES)), sorted(NAMES), source)
    }
  })

  it('should give none to a script that names none', () => {
    assert.deepEqual(sorted(usedNames('res2.end("hello")', NAMES)), [])
  })

  // What the runtime relies on: a script run with the values of the names it
  // is not given left undefined computes what it computes with all of them.
  it('should leave out only names whose values a script cannot see', () => {
    const escaped = (name) => '\\u' + name.charCodeAt(0).toString(16).padStart(4, '0') + name.slice(1)
    const expression = fc.oneof(
      fc.constantFrom(...NAMES),
      fc.constantFrom(...NAMES).map((name) => `eval(${JSON.stringify(name)})`),
      fc.integer({ min: 0, max: NAMES.length - 1 }).map((i) => `arguments[${i}]`),
      fc.constantFrom(...NAMES).map(escaped),
      fc.constantFrom(...NAMES).map((name) => `(typeof ${name})`),
      fc.constantFrom(...NAMES).map((name) => `'${name}'`),
      fc.constantFrom(...NAMES).map((name) => `x${name}`),
      fc.constantFrom(...NAMES).map((name) => `({ ${name}: 1 }).${name}`)
    )
    fc.assert(fc.property(fc.array(expression, { maxLength: 6 }), (expressions) => {
      const body = 'var ' + NAMES.map((name) => 'x' + name + ' = 0').join(', ') + '\nreturn [' + expressions.join(', ') + ']'
      const run = vm.compileFunction(body, NAMES)
      const all = NAMES.map((name) => 'value of ' + name)
      const used = usedNames(body, NAMES)
      const some = NAMES.map((name, i) => used.has(name) ? all[i] : undefined)
      assert.deepEqual(run(...some), run(...all))
    }), { numRuns: 2000 })
  })
})
