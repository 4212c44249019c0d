'use strict'

// PLACEHOLDER: Directory without trailing slash: 301.
function createTrailingSlashStage (options, shared) {
  return null
}

module.exports = { createTrailingSlashStage }
