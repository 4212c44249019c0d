'use strict'

// PLACEHOLDER: Path sanitization, rewriteDirtyURLs, 400 on malformed escapes.
function createSanitizeStage (options, shared) {
  return null
}

module.exports = { createSanitizeStage }
