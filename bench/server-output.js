'use strict'

// What a server started by a bench prints, kept as its own log lines only.
// Under load svr's access log goes to stdout as well, 10 MB and more a
// second: appending that to one string and testing a pattern on it at each
// chunk (as these benches once did) copies the whole string every time, so
// the bench's own process took a core from the server it measured, and
// after a few minutes the string outgrew V8's limit and the bench crashed.

// Every line but the access log's, which start "<address> - <user> [" (the
// common and combined formats): svr's own log, and a bare server's lines.
const OWN_LINE = /^(?!\S+ - \S+ \[).+$/gm
// A line longer than this without a newline is cut off.
const MAX_CARRY = 65536

class ServerOutput {
  /**
   * @param {import('node:child_process').ChildProcess} child spawned with stdout and stderr piped
   */
  constructor (child) {
    this.lines = []
    this.waiters = []
    this.exited = null
    // 'close': both streams have ended, so every line is in.
    child.once('close', (code, signal) => {
      this.exited = 'exited with ' + (signal || 'code ' + code)
      for (const waiter of this.waiters.splice(0)) waiter.reject(this.exitError())
    })
    for (const stream of [child.stdout, child.stderr]) {
      let carry = ''
      stream.setEncoding('utf8')
      stream.on('data', (chunk) => {
        const text = carry + chunk
        const end = text.lastIndexOf('\n')
        carry = text.slice(end + 1)
        if (carry.length > MAX_CARRY) carry = ''
        if (end !== -1) this.add(ownLines(text.slice(0, end), stream === child.stderr))
      })
    }
  }

  add (lines) {
    if (lines.length === 0) return
    for (const line of lines) this.lines.push(line)
    for (const waiter of this.waiters.slice()) this.check(waiter)
  }

  check (waiter) {
    for (let i = waiter.from; i < this.lines.length; i++) {
      const match = waiter.pattern.exec(this.lines[i])
      if (match === null) continue
      this.waiters.splice(this.waiters.indexOf(waiter), 1)
      waiter.resolve(match)
      return
    }
    waiter.from = this.lines.length
  }

  /**
   * @param {RegExp} pattern matched against each own line
   * @param {number} [from] a mark(): only lines printed after it count
   * @returns {Promise<RegExpExecArray>}
   */
  waitFor (pattern, from = 0) {
    return new Promise((resolve, reject) => {
      const waiter = { pattern, from, resolve, reject }
      this.waiters.push(waiter)
      this.check(waiter)
      if (this.exited !== null && this.waiters.includes(waiter)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1)
        reject(this.exitError())
      }
    })
  }

  exitError () {
    return new Error('the server ' + this.exited + ' before printing what was awaited:\n' + this.text())
  }

  /** @returns {number} where the lines printed from now on begin */
  mark () {
    return this.lines.length
  }

  /** @returns {string} the own lines so far, for an error message */
  text () {
    return this.lines.join('\n')
  }
}

// Every line of stderr is kept; of stdout, every one but the access log's.
function ownLines (text, everyLine) {
  if (everyLine) return text.split('\n')
  return text.match(OWN_LINE) || []
}

module.exports = { ServerOutput, ownLines }
