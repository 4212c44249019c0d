'use strict'

/**
 * The svr_acme_* series of the metrics endpoint, in prom-client's JSON form.
 * @param {Array<{name: string, issuer: string|null, notAfter: number|null, failures: number}>} rows
 *   the certificate manager's summary
 * @param {Map<string, {issued: number, failed: number}>} counts a CA's key -> its orders by result
 * @returns {object[]}
 */
function acmeMetricSeries (rows, counts) {
  return [
    {
      name: 'svr_acme_certificate_expiry_timestamp_seconds',
      help: 'When the certificate automatic HTTPS serves for a name expires (Unix time), with the CA that issued it; 0 while it has none.',
      type: 'gauge',
      aggregator: 'max',
      values: rows.map((row) => ({ labels: { name: row.name, issuer: row.issuer ?? '' }, value: row.notAfter === null ? 0 : Math.floor(row.notAfter / 1000) }))
    },
    {
      name: 'svr_acme_orders_total',
      help: 'Certificate orders by CA and result: issued, or failed (each failed attempt at each CA counts).',
      type: 'counter',
      aggregator: 'sum',
      values: [...counts].flatMap(([issuer, byResult]) => Object.keys(byResult).map((result) => ({ labels: { issuer, result }, value: byResult[result] })))
    },
    {
      name: 'svr_acme_failures',
      help: 'Failed orders in a row for a name (0 after a success).',
      type: 'gauge',
      aggregator: 'max',
      values: rows.map((row) => ({ labels: { name: row.name }, value: row.failures }))
    }
  ]
}

/**
 * What the status page and the metrics show of each name.
 * @param {Map<string, {failures: number, lastError: string|null, nextCheck: number|null}>} names the manager's
 * @param {Map<string, {notAfter: number, issuer: string}>} certificates the ones served
 * @returns {Array<{name: string, issuer: string|null, notAfter: number|null, failures: number, lastError: string|null, nextCheck: number|null}>}
 */
function acmeSummary (names, certificates) {
  return [...names].map(([name, state]) => {
    const current = certificates.get(name)
    return {
      name,
      issuer: current === undefined ? null : current.issuer,
      notAfter: current === undefined ? null : current.notAfter,
      failures: state.failures,
      lastError: state.lastError,
      nextCheck: state.nextCheck
    }
  })
}

module.exports = { acmeMetricSeries, acmeSummary }
