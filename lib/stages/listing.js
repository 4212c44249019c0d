'use strict'

// PLACEHOLDER: Directory listings.
function createListingStage (options, shared) {
  return null
}

module.exports = { createListingStage }
