'use strict'

// PLACEHOLDER: wwwredirect, wwwrootPostfixesVHost and rewriteMap.
function createRewriteStage (options, shared) {
  return null
}

module.exports = { createRewriteStage }
