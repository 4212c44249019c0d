'use strict'

const { request } = require('./http')

/**
 * Request `target` over and over until stop() is called; every failure
 * (connection error or non-200) is recorded, and every distinct body kept.
 * @param {number} port
 * @param {string} target
 * @param {{agent?: import('node:http').Agent, timeline?: Array<[number, boolean]>, before?: () => unknown}} [opts]
 *   timeline: gets [Date.now(), answered with 200] for every request as it ends;
 *   before: awaited before each request, to hold the loop
 * @returns {{stats: {ok: number, errors: string[], bodies: Set<string>}, stop: () => Promise<void>}}
 */
function clientLoop (port, target, { agent, timeline, before } = {}) {
  const stats = { ok: 0, errors: [], bodies: new Set() }
  let running = true
  const done = (async () => {
    while (running) {
      if (before !== undefined) await before()
      let ok = false
      try {
        const res = await request(port, target, { agent })
        ok = res.status === 200
        if (ok) stats.ok++
        else stats.errors.push('status ' + res.status)
        stats.bodies.add(res.body)
      } catch (err) {
        stats.errors.push(err.code || err.message)
      }
      if (timeline !== undefined) timeline.push([Date.now(), ok])
    }
  })()
  return { stats, stop: async () => { running = false; await done } }
}

module.exports = { clientLoop }
