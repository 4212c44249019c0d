'use strict'

// Mutations of the area 'proxy' (see scripts/mutations.js for the fields).

module.exports = []
