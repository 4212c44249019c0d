'use strict'

/**
 * The store's series, in prom-client's JSON form: none without `store`.
 * @param {import('./fleet-store').FleetStore|null} store
 * @returns {object[]}
 */
function storeMetrics (store) {
  if (store === null) return []
  return [{
    name: 'svr_store_up',
    help: 'Whether this instance is connected to the fleet\'s store (1) or acts on its own (0).',
    type: 'gauge',
    aggregator: 'max',
    values: [{ labels: {}, value: store.up ? 1 : 0 }]
  }]
}

module.exports = { storeMetrics }
