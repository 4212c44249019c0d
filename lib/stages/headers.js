'use strict'

// PLACEHOLDER: Server and customHeaders (+customHeadersVHost, `{path}`) on every response.
function createHeadersStage (options, shared) {
  return null
}

module.exports = { createHeadersStage }
