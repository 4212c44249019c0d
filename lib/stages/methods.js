'use strict'

// PLACEHOLDER: OPTIONS 204 and 405 for methods the built-in handlers do not serve.
function createMethodsStage (options, shared) {
  return null
}

module.exports = { createMethodsStage }
