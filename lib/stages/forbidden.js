'use strict'

// PLACEHOLDER: Forbidden paths and dotfiles.
function createForbiddenStage (options, shared) {
  return null
}

module.exports = { createForbiddenStage }
