'use strict'

// PLACEHOLDER: Clients in `blacklist` get 403.
function createBlocklistStage (options, shared) {
  return null
}

module.exports = { createBlocklistStage }
