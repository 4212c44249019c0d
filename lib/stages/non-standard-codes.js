'use strict'

// PLACEHOLDER: nonStandardCodes redirects and error codes.
function createNonStandardCodesStage (options, shared) {
  return null
}

module.exports = { createNonStandardCodesStage }
