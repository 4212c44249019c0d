'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { checkList, choose } = require('../../scripts/mutate')
const MUTATIONS = require('../../scripts/mutations')

const ROOT = path.join(__dirname, '..', '..')

describe('the mutation list of npm run test:mutate', () => {
  it('should match the code: every search text found once, every mutated file valid, every test file there', async () => {
    assert.deepEqual(await checkList(MUTATIONS, ROOT), [])
  })

  it('should choose by area and by text, numbering by the place in the whole list', () => {
    const reload = choose(MUTATIONS, { areas: ['reload'], only: null })
    assert.ok(reload.length > 0)
    assert.deepEqual([...new Set(reload.map((m) => m.area))], ['reload'])
    for (const m of reload) assert.equal(MUTATIONS[m.number - 1].what, m.what)
    assert.deepEqual(choose(MUTATIONS, { areas: ['reload'], only: 'no such text anywhere' }), [])
  })
})
