#!/usr/bin/env node
'use strict'

// `npm run test:mutate`: break the security- and lifecycle-critical code on
// purpose, one realistic mistake at a time (scripts/mutations.js), and run
// the tests written for it. Every mutation must make them fail; one that
// does not is a survivor, a claim no test holds. The work happens in a copy
// of the tree in a temporary directory, so the checkout is never modified,
// whatever stops the run. See docs/testing.md.
//
//   node scripts/mutate.js [--area NAME[,NAME]] [--only TEXT] [--list]
//
// Exit status: 0 when every mutation is caught; 1 when one survives, when a
// mutation's search text is not found exactly once (the list has rotted),
// or when the tests fail without any mutation.

const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const vm = require('node:vm')
const MUTATIONS = require('./mutations')

const ROOT = path.resolve(__dirname, '..')
// Left out of the copy: big, or not needed to run the tests.
const NOT_COPIED = new Set(['.git', 'node_modules', 'artifacts'])
const TEST_ARGS = ['--test', '--test-concurrency=2', '--test-timeout=90000', '--test-reporter=dot']

/**
 * Where `find` occurs in `text`.
 * @param {string} text
 * @param {string} find
 * @returns {number[]} every start offset
 */
function occurrences (text, find) {
  const found = []
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + 1)) found.push(at)
  return found
}

/**
 * Everything wrong with the list against the tree at `root`: a file or test
 * that is gone, a search text found not exactly once, a replacement that
 * changes nothing or does not compile.
 * @param {object[]} mutations
 * @param {string} root
 * @returns {Promise<string[]>}
 */
async function checkList (mutations, root) {
  const problems = []
  for (const [index, mutation] of mutations.entries()) {
    const label = `#${index + 1} (${mutation.file}: ${mutation.what})`
    let text
    try {
      text = await fs.readFile(path.join(root, mutation.file), 'utf8')
    } catch (err) {
      problems.push(`${label}: cannot read ${mutation.file}: ${err.code}`)
      continue
    }
    const count = occurrences(text, mutation.find).length
    if (count !== 1) problems.push(`${label}: the search text occurs ${count} times, not once`)
    else if (!compiles(text.replace(mutation.find, () => mutation.replace))) {
      // A syntax error fails every test, and would pass for a caught mutation.
      problems.push(`${label}: the mutated file is not valid JavaScript`)
    }
    if (mutation.find === mutation.replace) problems.push(`${label}: the replacement is the search text`)
    if (mutation.tests.length === 0) problems.push(`${label}: no test files`)
    if (typeof mutation.area !== 'string' || mutation.area === '') problems.push(`${label}: no area`)
    for (const test of mutation.tests) {
      await fs.access(path.join(root, test)).catch(() => problems.push(`${label}: no test file ${test}`))
    }
  }
  return problems
}

/**
 * @param {string} source a CommonJS module
 * @returns {boolean} whether it compiles
 */
function compiles (source) {
  try {
    new vm.Script('(function (exports, require, module, __filename, __dirname) {' + source + '\n})')
    return true
  } catch {
    return false
  }
}

/**
 * Copy the checkout (without .git and node_modules, which is linked) to a
 * new temporary directory.
 * @returns {Promise<string>} the copy's root
 */
async function copyTree () {
  const copy = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-mutate-'))
  // Readable by all, as a checkout is: a test may run svr as nobody.
  await fs.chmod(copy, 0o755)
  await fs.cp(ROOT, copy, {
    recursive: true,
    filter: (source) => !NOT_COPIED.has(path.basename(source))
  })
  await fs.symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir')
  return copy
}

/**
 * Run test files in the copy; the child gets its own process group, so
 * that an interrupted run can stop every process the tests started.
 * @param {string} root the copy
 * @param {string[]} tests
 * @param {{current: import('node:child_process').ChildProcess|null}} running
 * @returns {Promise<{passed: boolean, output: string}>}
 */
function runTests (root, tests, running) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...TEST_ARGS, ...tests], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    running.current = child
    let output = ''
    child.stdout.on('data', (chunk) => { output += chunk })
    child.stderr.on('data', (chunk) => { output += chunk })
    child.on('error', reject)
    child.on('close', (code) => {
      running.current = null
      stopStrays(root).then((stopped) => {
        if (stopped !== 0) console.log(`  (${stopped} process(es) of the copy's svr.js still ran after the tests; stopped)`)
        resolve({ passed: code === 0, output })
      })
    })
  })
}

// A mutated build can keep its servers from stopping, and a test whose
// hooks were cut short by its timeout leaves them running, each in a
// process group of its own, out of the test run's. Whatever still runs the
// copy's svr.js once its tests are over was started by them.
async function stopStrays (root) {
  const svr = path.join(root, 'svr.js')
  let stopped = 0
  for (const name of await fs.readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(name)) continue
    const cmdline = await fs.readFile(path.join('/proc', name, 'cmdline'), 'latin1').catch(() => '')
    if (!cmdline.split('\0').includes(svr)) continue
    try {
      process.kill(Number(name), 'SIGKILL')
      stopped++
    } catch {
      // Gone meanwhile.
    }
  }
  return stopped
}

function stopGroup (child) {
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

/**
 * The first failed test the dot reporter lists: the innermost one.
 * @param {string} output
 * @returns {string}
 */
function firstFailure (output) {
  const line = output.split('\n').find((text) => text.startsWith('✖ '))
  return line === undefined ? '(no test named: the run itself failed)' : line.slice(2).replace(/ \([\d.]+m?s\)$/, '')
}

function parseArgs (argv) {
  const options = { only: null, areas: null, list: false }
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--list') options.list = true
    else if (argv[i] === '--only' && i + 1 < argv.length) options.only = argv[++i]
    else if (argv[i] === '--area' && i + 1 < argv.length) options.areas = argv[++i].split(',')
    else throw new Error('usage: node scripts/mutate.js [--area NAME[,NAME]] [--only TEXT] [--list]')
  }
  return options
}

/**
 * @param {object[]} mutations
 * @param {{only: string|null, areas: string[]|null}} options
 * @returns {object[]} those the options choose, numbered by their place in the whole list
 */
function choose (mutations, options) {
  return mutations
    .map((mutation, index) => ({ ...mutation, number: index + 1 }))
    .filter((m) => options.areas === null || options.areas.includes(m.area))
    .filter((m) => options.only === null || m.file.includes(options.only) || m.what.includes(options.only))
}

function seconds (since) {
  return ((Date.now() - since) / 1000).toFixed(1) + ' s'
}

async function main () {
  const options = parseArgs(process.argv.slice(2))
  const chosen = choose(MUTATIONS, options)
  if (options.list) {
    for (const m of chosen) console.log(`#${m.number} [${m.area}] ${m.file}: ${m.what}\n    tests: ${m.tests.join(' ')}`)
    return 0
  }
  const problems = await checkList(MUTATIONS, ROOT)
  if (problems.length !== 0) {
    console.error('scripts/mutations.js no longer matches the code:\n  ' + problems.join('\n  '))
    return 1
  }
  if (chosen.length === 0) {
    const areas = [...new Set(MUTATIONS.map((m) => m.area))].join(', ')
    console.error('no mutation matches ' + JSON.stringify({ area: options.areas, only: options.only }) + '; the areas: ' + areas)
    return 1
  }

  const root = await copyTree()
  const running = { current: null }
  const originals = new Map()
  // Ctrl-C: stop the tests, remove the copy; the checkout was never touched.
  const interrupt = (signal) => {
    if (running.current !== null) stopGroup(running.current)
    fs.rm(root, { recursive: true, force: true }).finally(() => process.exit(signal === 'SIGINT' ? 130 : 143))
  }
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)
  try {
    const allTests = [...new Set(chosen.flatMap((m) => m.tests))]
    console.log(`baseline: ${allTests.length} test files without any mutation`)
    const started = Date.now()
    const baseline = await runTests(root, allTests, running)
    if (!baseline.passed) {
      console.error(baseline.output + '\nthe tests fail without any mutation; fix them first')
      return 1
    }
    console.log(`baseline passed (${seconds(started)})`)

    const survivors = []
    for (const m of chosen) {
      const file = path.join(root, m.file)
      if (!originals.has(file)) originals.set(file, await fs.readFile(file, 'utf8'))
      const original = originals.get(file)
      const since = Date.now()
      await fs.writeFile(file, original.replace(m.find, () => m.replace))
      let result
      try {
        result = await runTests(root, m.tests, running)
      } finally {
        await fs.writeFile(file, original)
      }
      const verdict = result.passed ? 'SURVIVED' : 'caught  '
      console.log(`${verdict} #${m.number} ${m.file}: ${m.what} (${seconds(since)})`)
      if (!result.passed) console.log('           by: ' + firstFailure(result.output))
      if (result.passed) survivors.push(m)
    }

    console.log(`\n${chosen.length} mutations: ${chosen.length - survivors.length} caught, ${survivors.length} survived`)
    for (const m of survivors) console.log(`  survivor #${m.number} ${m.file}: ${m.what}\n    tests run: ${m.tests.join(' ')}`)
    return survivors.length === 0 ? 0 : 1
  } finally {
    await fs.rm(root, { recursive: true, force: true })
  }
}

if (require.main === module) {
  main().then((code) => { process.exitCode = code }, (err) => {
    console.error(err.message)
    process.exitCode = 1
  })
}

module.exports = { checkList, occurrences, choose }
