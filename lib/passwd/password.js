'use strict'

const CTRL_C = '\u0003'
const CTRL_D = '\u0004'
const BACKSPACE = new Set(['\u007f', '\b'])
const LINE_END = /\r?\n/

/**
 * Read a password from a terminal without echoing it: the terminal goes
 * into raw mode, so the characters reach us instead of the screen.
 * @param {import('node:tty').ReadStream} input
 * @param {import('node:stream').Writable} output where the prompt goes (stderr)
 * @param {string} prompt
 * @returns {Promise<string>}
 * @throws {Error} with code 'ABORTED' on Ctrl-C, or Ctrl-D on an empty line
 */
function readHidden (input, output, prompt) {
  return new Promise((resolve, reject) => {
    let password = ''
    output.write(prompt)
    input.setRawMode(true)
    input.setEncoding('utf8')
    input.resume()
    function finish (err) {
      input.removeListener('data', onData)
      input.setRawMode(false)
      input.pause()
      output.write('\n')
      if (err) reject(err)
      else resolve(password)
    }
    function onData (chunk) {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return finish(null)
        if (ch === CTRL_C || (ch === CTRL_D && password === '')) return finish(aborted())
        if (BACKSPACE.has(ch)) password = Array.from(password).slice(0, -1).join('')
        else if (ch >= ' ') password += ch
      }
    }
    input.on('data', onData)
  })
}

/**
 * Read the first line of a stream (for --password-stdin), without its line end.
 * @param {import('node:stream').Readable} input
 * @returns {Promise<string>}
 */
async function readFirstLine (input) {
  let text = ''
  input.setEncoding('utf8')
  for await (const chunk of input) {
    text += chunk
    if (LINE_END.test(text)) break
  }
  return text.split(LINE_END)[0]
}

function aborted () {
  return Object.assign(new Error('aborted'), { code: 'ABORTED' })
}

module.exports = { readHidden, readFirstLine }
