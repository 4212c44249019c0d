'use strict'

// Where the CPU time of a worker goes, in a few categories that map onto
// the parts of svr one could change: each sample of a V8 .cpuprofile is
// charged to the first category found walking from the sampled frame
// toward the root, so time in Node's http code called by the access log
// counts as Node's, and time in the access log's own code as the log's.

const path = require('node:path')
const { pathToFileURL } = require('node:url')

const SOCKET_WRITES = 'socket writes (kernel)'
const GC = 'garbage collection'
const ACCESS_LOG = 'access log and request id'
const ASYNC_CONTEXT = 'async context (error containment)'
const APPLICATION = 'application (serverSideScript.js; bare: its handler)'
const PIPELINE = 'svr pipeline'
const SEND = 'send'
const NODE_HTTP = 'Node http, net and streams'
const OTHER = 'other'

/** The categories, in the order in which a frame is tested against them. */
const CATEGORIES = [SOCKET_WRITES, GC, ACCESS_LOG, ASYNC_CONTEXT, APPLICATION, PIPELINE, SEND, NODE_HTTP, OTHER]

// Native write calls of the stream handles; as leaves, their time is
// mostly the system call. fs has calls of the same names (the access log's
// writes to a file): those called from node:fs are not socket writes.
const WRITE_CALLS = new Set(['writev', 'writeBuffer', 'writeUtf8String', 'writeLatin1String', 'writeAsciiString'])
const NODE_HTTP_URLS = ['node:_http', 'node:net', 'node:internal/streams', 'node:internal/stream_base_commons', 'node:internal/http', 'node:events']
const ASYNC_HOOKS_URLS = new Set(['node:async_hooks', 'node:internal/async_hooks'])
const BARE_HANDLER = '/bare-cluster.js'
const PROJECT_ROOT = path.join(__dirname, '..')

/**
 * Calls fn(node, us) for every sample of the profile that falls within the
 * window, with the time charged to it (the delta since the sample before).
 * @param {{nodes: object[], samples: number[], timeDeltas: number[], startTime: number}} profile
 * @param {{startUs: number, endUs: number}|null} window on the monotonic clock of process.hrtime, in µs; null: all samples
 * @param {(node: object, us: number) => void} fn
 */
function eachSample (profile, window, fn) {
  const byId = nodesById(profile)
  let time = profile.startTime || 0
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] || 0
    time += delta
    if (window && (time < window.startUs || time > window.endUs)) continue
    // Deltas can come out of order by a few µs; a negative one is noise.
    fn(byId.get(profile.samples[i]), Math.max(delta, 0))
  }
}

/**
 * Busy time of one profile by category; idle samples are counted apart.
 * @param {object} profile a V8 .cpuprofile
 * @param {{root?: string, window?: {startUs: number, endUs: number}|null}} [opts]
 *   root: the project whose lib/ is the svr pipeline (default: this checkout)
 * @returns {{busyUs: number, idleUs: number, byCategory: Object<string, number>}}
 */
function categorize (profile, opts = {}) {
  const classify = classifier(profile, opts.root || PROJECT_ROOT)
  const byCategory = Object.fromEntries(CATEGORIES.map((name) => [name, 0]))
  let busyUs = 0
  let idleUs = 0
  eachSample(profile, opts.window || null, (node, us) => {
    if (node.callFrame.functionName === '(idle)') {
      idleUs += us
      return
    }
    busyUs += us
    byCategory[classify(node)] += us
  })
  return { busyUs, idleUs, byCategory }
}

/**
 * CPU µs per request by category, summed over the profiles of the worker
 * processes that served the requests between them.
 * @param {object[]} profiles
 * @param {number} requests completed within the window
 * @param {{root?: string, window?: {startUs: number, endUs: number}|null}} [opts]
 * @returns {{busy: number, byCategory: Object<string, number>}} µs per request
 */
function costPerRequest (profiles, requests, opts = {}) {
  const byCategory = Object.fromEntries(CATEGORIES.map((name) => [name, 0]))
  let busy = 0
  for (const profile of profiles) {
    const part = categorize(profile, opts)
    busy += part.busyUs
    for (const name of CATEGORIES) byCategory[name] += part.byCategory[name]
  }
  const per = Math.max(requests, 1)
  for (const name of CATEGORIES) byCategory[name] /= per
  return { busy: busy / per, byCategory }
}

// One walk per node, remembered: the nodes of a profile are few, its
// samples many.
function classifier (profile, root) {
  const byId = nodesById(profile)
  const parentOf = new Map()
  for (const node of profile.nodes) {
    for (const child of node.children || []) parentOf.set(child, node.id)
  }
  const libPrefixes = [path.join(root, 'lib') + path.sep, pathToFileURL(path.join(root, 'lib')).href + '/']
  const known = new Map()
  return function classify (leaf) {
    let category = known.get(leaf.id)
    if (category === undefined) {
      category = walk(leaf)
      known.set(leaf.id, category)
    }
    return category
  }

  function walk (leaf) {
    if (isSocketWrite(leaf, byId.get(parentOf.get(leaf.id)))) return SOCKET_WRITES
    for (let node = leaf; node; node = byId.get(parentOf.get(node.id))) {
      const found = frameCategory(node.callFrame, libPrefixes)
      if (found !== null) return found
    }
    return OTHER
  }
}

function isSocketWrite (leaf, caller) {
  const { functionName, url } = leaf.callFrame
  return url === '' && WRITE_CALLS.has(functionName) && !(caller && caller.callFrame.url === 'node:fs')
}

function frameCategory ({ functionName, url }, libPrefixes) {
  if (functionName === '(garbage collector)') return GC
  if (url.includes('/lib/logging/')) return ACCESS_LOG
  if (url.includes('/lib/request-scope') || ASYNC_HOOKS_URLS.has(url)) return ASYNC_CONTEXT
  if (url.endsWith('serverSideScript.js') || url.endsWith(BARE_HANDLER)) return APPLICATION
  if (libPrefixes.some((prefix) => url.startsWith(prefix))) return PIPELINE
  if (url.includes('node_modules/send/')) return SEND
  if (NODE_HTTP_URLS.some((prefix) => url.startsWith(prefix))) return NODE_HTTP
  return null
}

const byIdCache = new WeakMap()

function nodesById (profile) {
  let byId = byIdCache.get(profile)
  if (!byId) {
    byId = new Map(profile.nodes.map((node) => [node.id, node]))
    byIdCache.set(profile, byId)
  }
  return byId
}

module.exports = { CATEGORIES, eachSample, categorize, costPerRequest }
