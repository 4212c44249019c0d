'use strict'

const kCounters = Symbol('svr.lazyCounters')

/**
 * Increment a counter of the worker's registry that is made at its first
 * use, while `metricsPath` is set: a feature that never acts adds no series.
 * @param {{metrics: {registry: object}|null}} runtime
 * @param {{name: string, help: string, labelNames: string[]}} spec
 * @param {object} labels
 */
function countLazily (runtime, spec, labels) {
  if (runtime.metrics === null) return
  const { registry } = runtime.metrics
  if (registry[kCounters] === undefined) registry[kCounters] = new Map()
  let counter = registry[kCounters].get(spec.name)
  if (counter === undefined) {
    const { Counter } = require('prom-client')
    counter = new Counter({ ...spec, registers: [registry] })
    registry[kCounters].set(spec.name, counter)
  }
  counter.inc(labels)
}

module.exports = { countLazily }
