'use strict'

// Mutations of the area 'http2-logging' (see scripts/mutations.js for the fields).

module.exports = []
