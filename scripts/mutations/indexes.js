'use strict'

// Mutations of the area 'indexes' (see scripts/mutations.js for the fields).

module.exports = []
