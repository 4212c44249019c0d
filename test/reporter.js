'use strict'

// The reporter of `npm test`: Node's own output (spec on a terminal, TAP
// otherwise, as `node --test` chooses in Node 20) followed by one line that
// says what was skipped and why, so that a partial run (a tool missing,
// not root) cannot pass for a full one, and by one line per failed test, so
// that the end of a long log (all a CI page may show) names what failed.

const { Readable } = require('node:stream')
const { spec: Spec, tap } = require('node:test/reporters')

/**
 * @param {AsyncIterable<{type: string, data: object}>} source test events
 * @returns {AsyncGenerator<string>}
 */
module.exports = async function * reporter (source) {
  const skipped = new Map()
  const failures = new FailureList()
  async function * recorded () {
    for await (const event of source) {
      failures.observe(event)
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
  const mark = terminal ? 'ℹ ' : '# '
  yield mark + skipSummary(skipped) + '\n'
  for (const line of failures.lines()) yield mark + line + '\n'
}

/**
 * The failed tests of a run, each named by its file and the names of the
 * suites that hold it. Test files run in parallel, so the suites being run
 * are followed per file.
 */
class FailureList {
  constructor () {
    this.open = new Map() // file -> names of the tests started, by nesting
    this.failed = []
  }

  observe ({ type, data }) {
    if (type === 'test:start') {
      const names = this.open.get(data.file) || []
      names.length = data.nesting
      names.push(data.name)
      this.open.set(data.file, names)
    } else if (type === 'test:fail' && data.details.type !== 'suite') {
      const names = (this.open.get(data.file) || []).slice(0, data.nesting)
      names.push(data.name)
      this.failed.push({ file: data.file, names, error: data.details.error })
    }
  }

  /** @returns {string[]} e.g. "failed: test/http/x.test.js › suite › test — message" */
  lines () {
    return this.failed.map(({ file, names, error }) => {
      const where = file ? [relativeFile(file), ...names] : names
      return `failed: ${where.join(' › ')} — ${errorText(error)}`
    })
  }
}

function relativeFile (file) {
  const cwd = process.cwd() + '/'
  return file.startsWith(cwd) ? file.slice(cwd.length) : file
}

/** What a failed test threw (its cause when Node wrapped it) on one line of at most 200 characters. */
function errorText (error) {
  if (!error) return 'no error given'
  const cause = error.code === 'ERR_TEST_FAILURE' && error.cause ? error.cause : error
  const message = cause instanceof Error ? cause.message : String(cause)
  const text = message.split('\n').map((line) => line.trim()).filter(Boolean).join(' ') || cause.code || 'no message'
  return text.length > 200 ? text.slice(0, 199) + '…' : text
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
module.exports.FailureList = FailureList
