'use strict'

// The section of `npm run bench -- --own --count` (bench/count.js).

const HEADING = '## svr\'s own instructions per request'

/**
 * svr's own instructions per request (svr's less the replay's), and with
 * an against side its own and the ratio of the two.
 * @param {{svr: number|null, baseline: number|null, against: number|null}} row
 * @returns {{own: number|null, againstOwn: number|null, ratio: number|null}}
 */
function countsOf (row) {
  const own = row.svr === null || row.baseline === null ? null : row.svr - row.baseline
  const againstOwn = row.against === null || row.baseline === null ? null : row.against - row.baseline
  const ratio = own === null || againstOwn === null || againstOwn <= 0 ? null : own / againstOwn
  return { own, againstOwn, ratio }
}

/**
 * @param {object[]} rows from measureCounts
 * @param {{date: string, cpu: string, node: string, plan: {warm: number, passes: number, settle: number, counted: number}, against: {label: string}|null}} facts
 * @returns {string} markdown
 */
function renderCounts (rows, { date, cpu, node, plan, against }) {
  const lines = [
    HEADING,
    '',
    `${date} · ${cpu} · Node ${node} · each target in one process under callgrind, ${plan.passes} × ${count(plan.warm)} requests of ` +
      `warm-up uninstrumented (new connections each time), ${count(plan.settle)} instrumented to settle the simulated caches, then ` +
      `${count(plan.counted)} counted, over 10 connections (10 streams each over HTTP/2)`,
    '',
    ...countTable(rows, (row) => row, against),
    '',
    'Instructions a request executed by the main thread (valgrind\'s callgrind; what the machine\'s load does ' +
      'not change): svr `--single-threaded`, and bench/bare-replay.js in one process (BENCH_SINGLE=1) sending ' +
      'svr\'s recorded answers. svr\'s own = svr − baseline. `fileCacheTtl` is raised to 600 s for the count, ' +
      'since valgrind slows a process about fifty times and would otherwise send most requests through the ' +
      'stat the cache spares at full speed. Not counted: V8\'s helper threads, the kernel\'s share of system ' +
      'calls, and what cache misses cost, which the timed section above does include (the instruction ' +
      'cache\'s misses are counted below).',
    '',
    '### Instruction-cache misses per request',
    '',
    ...countTable(rows, (row) => row.misses, against),
    '',
    'Misses of the first-level instruction cache by the same requests\' main thread, in callgrind\'s simulation ' +
      'of this machine\'s cache. A request\'s path through Node, V8 and svr is larger than that cache, so almost ' +
      'every line of code it runs is fetched again on every request: each function, builtin and inline cache ' +
      'a request passes through costs misses, however few of its instructions it runs. What svr\'s own misses ' +
      'cost is part of the timed own µs that its own instructions do not explain.'
  ]
  if (against !== null) lines.push('', `against: ${against.label}, the same configs, counted the same way.`)
  return lines.join('\n') + '\n'
}

// A table of one count: `pick` gives a row's {svr, baseline, against}.
function countTable (rows, pick, against) {
  const more = against === null ? [] : ['against', 'against\'s own', 'own / against\'s own']
  const lines = [
    '| ' + ['workload', 'svr', 'baseline', 'svr\'s own', ...more].join(' | ') + ' |',
    '|---|' + '---:|'.repeat(3 + more.length)
  ]
  for (const row of rows) {
    const counted = pick(row)
    const { own, againstOwn, ratio } = countsOf(counted)
    const cells = [countedWhat(row.workload.what), count(counted.svr), count(counted.baseline), count(own)]
    if (against !== null) cells.push(count(counted.against), count(againstOwn), ratio === null ? 'n/a' : ratio.toFixed(2))
    lines.push('| ' + cells.join(' | ') + ' |')
  }
  return lines
}

// The workload without the timed load's tool: the count has its own.
function countedWhat (what) {
  return what.replace(/, `[^`]*`\)$/, ')')
}

function count (value) {
  return value === null ? 'n/a' : Math.round(value).toLocaleString('en-US')
}

module.exports = { countsOf, renderCounts, COUNT_HEADING: HEADING }
