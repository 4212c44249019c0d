'use strict'

// The cost curves as an SVG line chart, drawn from the numbers of the run
// that measured them: one line per dimension, req/s of each row over the
// smallest row of its dimension, against the size of the row over the
// smallest (1×, 10×, 100×, on a log scale). Plain SVG text so that it diffs
// and renders on GitHub.

const WIDTH = 640
const HEIGHT = 360
const MARGIN = { top: 30, right: 200, bottom: 46, left: 56 }
const COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#17becf']

/**
 * @param {Array<{dimension: {name: string, what: string}, rows: Array<{n: number, load: {rps: number}}>}>} curves
 * @param {{flat: number}} limits the flatness goal, drawn as a dashed line
 * @returns {string} an SVG document
 */
function renderCurvesSvg (curves, limits) {
  const series = curves.map(({ dimension, rows }) => ({
    name: dimension.name,
    // Dimensions start at different sizes (0 mods, 10 users): the factor
    // is taken over the smallest non-zero size.
    points: rows.map((row) => ({ step: Math.log10(Math.max(1, row.n) / Math.max(1, rows[0].n || rows[1].n / 10)), n: row.n, rate: row.load.rps / rows[0].load.rps }))
  }))
  const decades = Math.max(1, Math.ceil(Math.max(...series.flatMap((s) => s.points.map((p) => p.step))) - 1e-9))
  const top = Math.max(1.2, ...series.flatMap((s) => s.points.map((p) => p.rate)))
  const yMax = Math.ceil(top * 5) / 5
  const plot = { w: WIDTH - MARGIN.left - MARGIN.right, h: HEIGHT - MARGIN.top - MARGIN.bottom }
  const x = (step) => MARGIN.left + (step / decades) * plot.w
  const y = (rate) => MARGIN.top + plot.h - (rate / yMax) * plot.h
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#fff"/>`,
    `<text x="${MARGIN.left}" y="18" font-size="14">req/s relative to the smallest row, per dimension</text>`
  ]
  for (let tick = 0; tick <= yMax + 1e-9; tick += 0.2) {
    const ty = y(tick).toFixed(1)
    parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plot.w}" y1="${ty}" y2="${ty}" stroke="#eee"/>`,
      `<text x="${MARGIN.left - 6}" y="${ty}" text-anchor="end" dominant-baseline="middle">${tick.toFixed(1)}</text>`)
  }
  const flatY = y(limits.flat).toFixed(1)
  parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left + plot.w}" y1="${flatY}" y2="${flatY}" stroke="#888" stroke-dasharray="4 3"/>`,
    `<text x="${MARGIN.left + plot.w - 4}" y="${(y(limits.flat) - 4).toFixed(1)}" text-anchor="end" fill="#666">flat: ≥ ${limits.flat}</text>`)
  for (let step = 0; step <= decades; step++) {
    parts.push(`<text x="${x(step).toFixed(1)}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${10 ** step}×</text>`)
  }
  parts.push(`<text x="${MARGIN.left + plot.w / 2}" y="${HEIGHT - 8}" text-anchor="middle">entries over the smallest row (log scale)</text>`)
  series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]
    const d = s.points.map((p, j) => (j === 0 ? 'M' : 'L') + x(p.step).toFixed(1) + ' ' + y(p.rate).toFixed(1)).join(' ')
    parts.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="2"/>`)
    for (const p of s.points) {
      parts.push(`<circle cx="${x(p.step).toFixed(1)}" cy="${y(p.rate).toFixed(1)}" r="3" fill="${colour}"><title>${escapeXml(s.name)} ${p.n}: ${p.rate.toFixed(2)}</title></circle>`)
    }
    const ly = MARGIN.top + 10 + i * 18
    parts.push(`<line x1="${WIDTH - MARGIN.right + 16}" x2="${WIDTH - MARGIN.right + 36}" y1="${ly}" y2="${ly}" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${WIDTH - MARGIN.right + 42}" y="${ly}" dominant-baseline="middle">${escapeXml(legend(s))}</text>`)
  })
  parts.push('</svg>', '')
  return parts.join('\n')
}

function legend (series) {
  return series.name + ' (' + series.points.map((p) => compact(p.n)).join(' / ') + ')'
}

function compact (n) {
  return n >= 1000 && n % 1000 === 0 ? n / 1000 + 'k' : String(n)
}

function escapeXml (text) {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c])
}

module.exports = { renderCurvesSvg }
