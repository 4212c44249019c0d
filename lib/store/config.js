'use strict'

const path = require('node:path')

/**
 * The problems of a `store` the schema cannot see.
 * @param {object} data the configuration as validated
 * @returns {string[]}
 */
function storeProblems (data) {
  const store = data.store
  if (store === null || typeof store !== 'object') return []
  const problems = []
  let url = null
  try {
    url = new URL(store.url ?? 'redis://127.0.0.1:6379')
  } catch {
    problems.push('/store/url: not a URL')
  }
  if (url !== null) problems.push(...urlProblems(url))
  const sentinels = Array.isArray(store.sentinels) ? store.sentinels : []
  if (sentinels.length !== 0 && store.masterName == null) {
    problems.push('/store/masterName: needed with "sentinels": the name Sentinel monitors the primary under')
  }
  if (store.ca != null && url !== null && url.protocol !== 'rediss:') problems.push('/store/ca: only used with a rediss:// URL')
  return problems
}

function urlProblems (url) {
  const problems = []
  if (url.password !== '') problems.push('/store/url: holds a password: put it in the file named by "passwordFile", which config.json only names')
  try {
    decodeURIComponent(url.username)
  } catch {
    problems.push('/store/url: the user name is not valid percent-encoding')
  }
  const db = url.pathname.replace(/^\//, '')
  if (db !== '' && !/^(?:[0-9]|1[0-5])$/.test(db)) problems.push('/store/url: the path is the database number, 0 to 15 ("redis://host:6379/2")')
  return problems
}

// The store's keys to the configuration loader (lib/config/load.js).
const storeConfig = {
  problems: storeProblems,
  resolve (config, configDir) {
    const store = config.store
    if (store === null) return
    if (store.passwordFile !== null) store.passwordFile = path.resolve(configDir, store.passwordFile)
    if (store.ca !== null) store.ca = path.resolve(configDir, store.ca)
    if (store.keyFile !== null) store.keyFile = path.resolve(configDir, store.keyFile)
  }
}

module.exports = { storeConfig }
