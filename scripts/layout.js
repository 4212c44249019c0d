#!/usr/bin/env node
'use strict'

// Reports what keeps lib/ readable as a map of the processes: circles of
// folders importing each other, loose files at lib/'s root and files past 300
// lines. `node scripts/layout.js` prints the report and exits 1 when one of
// them is found; test/unit/layout.test.js runs the same checks.
//
// Every directory counts as a folder (lib/pipeline/stages/ apart from
// lib/pipeline/, so a folder's subfolders sit below it too); a file at lib/'s
// root counts as a folder of its own.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const LIB = path.join(ROOT, 'lib')
const MAX_ROOT_FILES = 10
const MAX_LINES = 300
const REQUIRE = /\brequire\(\s*'(\.{1,2}\/[^']*)'\s*\)/g

function listSources (dir) {
  const files = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) files.push(...listSources(full))
    else if (entry.name.endsWith('.js')) files.push(full)
  }
  return files.sort()
}

function resolveLocal (from, request) {
  const base = path.resolve(path.dirname(from), request)
  for (const candidate of [base, base + '.js', path.join(base, 'index.js')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate
  }
  return null
}

function folderOf (file) {
  const relative = path.relative(LIB, file)
  const dir = path.dirname(relative)
  return dir === '.' ? relative : dir.split(path.sep).join('/') + '/'
}

// Every import between two folders, as `from -> to` with the files that make it.
function folderGraph (files) {
  const edges = new Map()
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8')
    for (const match of text.matchAll(REQUIRE)) {
      const target = resolveLocal(file, match[1])
      if (target === null || !target.startsWith(LIB + path.sep)) continue
      const from = folderOf(file)
      const to = folderOf(target)
      if (from === to) continue
      if (!edges.has(from)) edges.set(from, new Map())
      const targets = edges.get(from)
      if (!targets.has(to)) targets.set(to, [])
      targets.get(to).push(path.relative(ROOT, file) + ' -> ' + path.relative(ROOT, target))
    }
  }
  return edges
}

// Tarjan's strongly connected components; a component of more than one
// folder is a circle.
function circles (edges) {
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  let counter = 0
  const visit = (node) => {
    index.set(node, counter)
    low.set(node, counter)
    counter++
    stack.push(node)
    onStack.add(node)
    for (const next of (edges.get(node) || new Map()).keys()) {
      if (!index.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node), low.get(next)))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node), index.get(next)))
      }
    }
    if (low.get(node) !== index.get(node)) return
    const component = []
    let member
    do {
      member = stack.pop()
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1) found.push(component.sort())
  }
  for (const node of edges.keys()) if (!index.has(node)) visit(node)
  return found
}

// The imports inside one circle, so a report says which lines to change.
function circleImports (edges, circle) {
  const members = new Set(circle)
  const lines = []
  for (const from of circle) {
    for (const [to, imports] of edges.get(from) || []) {
      if (members.has(to)) lines.push(...imports)
    }
  }
  return lines.sort()
}

function countLines (file) {
  const text = fs.readFileSync(file, 'utf8')
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length
}

function checkLayout () {
  const files = listSources(LIB)
  const edges = folderGraph(files)
  return {
    circles: circles(edges).map((circle) => ({ folders: circle, imports: circleImports(edges, circle) })),
    rootFiles: files.filter((file) => path.dirname(file) === LIB).map((file) => path.relative(ROOT, file)),
    longFiles: files
      .map((file) => ({ file: path.relative(ROOT, file), lines: countLines(file) }))
      .filter((entry) => entry.lines > MAX_LINES)
  }
}

function report (layout) {
  const lines = []
  for (const circle of layout.circles) {
    lines.push(`circle of folders: ${circle.folders.join(', ')}`)
    for (const line of circle.imports) lines.push(`  ${line}`)
  }
  if (layout.rootFiles.length > MAX_ROOT_FILES) {
    lines.push(`${layout.rootFiles.length} files at lib/'s root (at most ${MAX_ROOT_FILES}): ${layout.rootFiles.join(', ')}`)
  }
  for (const { file, lines: count } of layout.longFiles) {
    lines.push(`${file}: ${count} lines (at most ${MAX_LINES})`)
  }
  return lines
}

module.exports = { checkLayout, report, MAX_ROOT_FILES, MAX_LINES }

if (require.main === module) {
  const problems = report(checkLayout())
  for (const line of problems) console.log(line)
  if (problems.length > 0) process.exitCode = 1
  else console.log('lib/: no circle of folders, at most 10 root files, no file over 300 lines')
}
