'use strict'

/**
 * The store's series, in prom-client's JSON form: none without `store`.
 * @param {import('./fleet-store').FleetStore|null} store
 * @param {import('./fleet-view').FleetView|null} fleet
 * @returns {object[]}
 */
function storeMetrics (store, fleet) {
  if (store === null) return []
  const { members } = fleet.summary()
  return [{
    name: 'svr_store_up',
    help: 'Whether this instance is connected to the fleet\'s store (1) or acts on its own (0).',
    type: 'gauge',
    aggregator: 'max',
    values: [{ labels: {}, value: store.up ? 1 : 0 }]
  }, {
    name: 'svr_fleet_instances',
    help: 'Instances of the fleet seen in the store within the last 30 s, as this instance last read it.',
    type: 'gauge',
    aggregator: 'max',
    values: [{ labels: {}, value: members.length }]
  }, {
    name: 'svr_fleet_instance_last_seen_seconds',
    help: 'When each instance of the fleet was last seen alive (Unix time), with its svr version.',
    type: 'gauge',
    aggregator: 'max',
    values: members.map((member) => ({ labels: { instance: member.instance, version: member.version }, value: Math.floor(member.seen / 1000) }))
  }]
}

module.exports = { storeMetrics }
