'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { promisify } = require('node:util')
const { renderConfigDocs, main, DOCS_FILE } = require('../../scripts/gen-config-docs')
const { schema } = require('../../lib/config/load')

const SCRIPT = path.join(__dirname, '..', '..', 'scripts', 'gen-config-docs.js')

/** The text of one key's section: from its heading to the next heading. */
function section (docs, key) {
  const start = docs.indexOf('\n### `' + key + '`\n')
  assert.notEqual(start, -1, 'no section for ' + key)
  const end = docs.indexOf('\n#', start + 1)
  return docs.slice(start, end === -1 ? undefined : end)
}

describe('docs/config.md', () => {
  it('should have a heading for every top-level schema property', async () => {
    const docs = await fs.readFile(DOCS_FILE, 'utf8')
    const headings = new Set(docs.split('\n').filter((line) => line.startsWith('### ')).map((line) => line.slice(4)))
    for (const key of Object.keys(schema.properties)) assert.ok(headings.has('`' + key + '`'), key)
  })

  it('should equal what the generator writes from the schema', async () => {
    assert.equal(await fs.readFile(DOCS_FILE, 'utf8'), renderConfigDocs(schema))
  })

  it('should pass gen-config-docs.js --check', async () => {
    await promisify(execFile)(process.execPath, [SCRIPT, '--check'])
  })

  it('should show type, default and description of each key', () => {
    const docs = renderConfigDocs(schema)
    const text = section(docs, 'dotfiles')
    assert.match(text, /^- Type: "deny" \| "allow" \| "ignore"$/m)
    assert.match(text, /^- Default: `"deny"`$/m)
    assert.ok(text.includes(schema.properties.dotfiles.description))
  })

  it('should say how each marked key differs from SVR.JS', () => {
    const docs = renderConfigDocs(schema)
    for (const [key, property] of Object.entries(schema.properties)) {
      const line = '- Differs from SVR.JS'
      if (property['x-svr'] === undefined) {
        assert.ok(!section(docs, key).includes(line), key)
      } else {
        assert.ok(section(docs, key).includes(line + ' (') && section(docs, key).includes(property['x-svr-note']), key)
      }
    }
  })

  it('should describe the fields of nested entries', () => {
    const text = section(renderConfigDocs(schema), 'rewriteMap')
    assert.match(text, /^\| `definingRegex` \| regex string \| yes \| /m)
    assert.match(text, /^Fields of each `replacements` entry:$/m)
    assert.match(section(renderConfigDocs(schema), 'nonStandardCodes'), /At least one of `url` or `regex` is required\./)
  })
})

describe('gen-config-docs.js --check', () => {
  it('should exit 1 when the file is out of date and 0 once regenerated', async (t) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-docs-'))
    t.after(() => fs.rm(dir, { recursive: true, force: true }))
    const file = path.join(dir, 'config.md')
    await fs.writeFile(file, renderConfigDocs(schema).replace('### `port`', '### `prot`'))
    const stderr = t.mock.method(process.stderr, 'write', () => true)
    const stdout = t.mock.method(process.stdout, 'write', () => true)
    assert.equal(main(['--check'], file), 1)
    assert.match(stderr.mock.calls[0].arguments[0], /config\.md is out of date/)
    assert.equal(main([], file), 0)
    assert.equal(stdout.mock.callCount(), 1)
    assert.equal(main(['--check'], file), 0)
  })

  it('should exit 1 when the file is missing', (t) => {
    t.mock.method(process.stderr, 'write', () => true)
    assert.equal(main(['--check'], path.join(os.tmpdir(), 'svr-no-such-dir', 'config.md')), 1)
  })
})
