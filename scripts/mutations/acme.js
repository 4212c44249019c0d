'use strict'

// Mutations of the area 'acme' (see scripts/mutations.js for the fields).

module.exports = []
