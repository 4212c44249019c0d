'use strict'

// The reporter of `npm test`: Node's own output (spec on a terminal, TAP
// otherwise, as `node --test` chooses in Node 20) followed by one line that
// says what was skipped and why, so that a partial run (a tool missing,
// not root) cannot pass for a full one.

const { Readable } = require('node:stream')
const { spec: Spec, tap } = require('node:test/reporters')

/**
 * @param {AsyncIterable<{type: string, data: object}>} source test events
 * @returns {AsyncGenerator<string>}
 */
module.exports = async function * reporter (source) {
  const skipped = new Map()
  async function * recorded () {
    for await (const event of source) {
      if (event.type === 'test:pass' && event.data.skip !== undefined && event.data.skip !== false) {
        const reason = event.data.skip === true ? 'no reason given' : event.data.skip
        const counts = skipped.get(reason) || { test: 0, suite: 0 }
        counts[event.data.details.type === 'suite' ? 'suite' : 'test']++
        skipped.set(reason, counts)
      }
      yield event
    }
  }
  const terminal = Boolean(process.stdout.isTTY)
  const output = terminal ? Readable.from(recorded()).pipe(new Spec()) : tap(recorded())
  for await (const chunk of output) yield chunk
  yield (terminal ? 'ℹ ' : '# ') + skipSummary(skipped) + '\n'
}

/**
 * One line: what was skipped (tests and whole suites), by reason.
 * @param {Map<string, {test: number, suite: number}>} skipped reason -> counts
 * @returns {string} e.g. "skip summary: 3 tests skipped — 3 tests: needs nginx, …"
 */
function skipSummary (skipped) {
  if (skipped.size === 0) return 'skip summary: nothing skipped'
  const total = { test: 0, suite: 0 }
  for (const counts of skipped.values()) {
    total.test += counts.test
    total.suite += counts.suite
  }
  const reasons = [...skipped]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([reason, counts]) => `${countText(counts)}: ${reason}`)
  return `skip summary: ${countText(total)} skipped — ${reasons.join('; ')}`
}

function countText ({ test, suite }) {
  const parts = []
  if (test !== 0) parts.push(test + (test === 1 ? ' test' : ' tests'))
  if (suite !== 0) parts.push(suite + (suite === 1 ? ' suite' : ' suites'))
  return parts.join(', ')
}

module.exports.skipSummary = skipSummary
