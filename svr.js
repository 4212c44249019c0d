#!/usr/bin/env node
'use strict'

// One file for both roles, as Node's cluster forks this same script.
const cluster = require('node:cluster')

if (cluster.isWorker) {
  require('./lib/worker/worker').runWorker()
} else {
  require('./lib/primary/main').main(process.argv.slice(2))
}
