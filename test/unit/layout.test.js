'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { checkLayout, report, MAX_ROOT_FILES } = require('../../scripts/layout')

// The layout is part of the architecture (docs/architecture.md): a folder
// imports only folders below it, lib/'s root stays small and no file grows
// past what one concern needs.
describe('lib/ layout', () => {
  const layout = checkLayout()

  it('has no circle of folders importing each other', () => {
    assert.deepEqual(layout.circles, [], report({ ...layout, rootFiles: [], longFiles: [] }).join('\n'))
  })

  it(`keeps at most ${MAX_ROOT_FILES} files at lib/'s root`, () => {
    assert.ok(layout.rootFiles.length <= MAX_ROOT_FILES, layout.rootFiles.join(', '))
  })

  it('has no file over 300 lines', () => {
    assert.deepEqual(layout.longFiles, [])
  })
})

describe('the docs', () => {
  const root = path.join(__dirname, '..', '..')
  const docs = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => 'docs/' + name)]

  it('name only files of lib/ that exist (a recipe\'s `your-…` excepted)', () => {
    const missing = []
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(root, doc), 'utf8')
      for (const [file] of text.matchAll(/(?<![\w/])lib\/[\w./-]+\.js\b/g)) {
        if (!file.includes('/your-') && !fs.existsSync(path.join(root, file))) missing.push(doc + ': ' + file)
      }
    }
    assert.deepEqual(missing, [])
  })
})
