'use strict'

// Mutations of the area 'supervisor' (see scripts/mutations.js for the fields).

module.exports = []
