'use strict'

const { rateLimitProblems } = require('./rules')

// The keys of traffic control to the configuration loader (lib/config/load.js).
const trafficConfig = {
  problems: rateLimitProblems
}

module.exports = { trafficConfig }
