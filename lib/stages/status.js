'use strict'

// PLACEHOLDER: The /svrjsstatus.svr status page.
function createStatusStage (options, shared) {
  return null
}

module.exports = { createStatusStage }
