'use strict'

const fs = require('node:fs/promises')
const { invalidConfig } = require('../errors')
const { readStoreKey } = require('./sealing')

/**
 * Read what the store's connection needs from files: the password
 * (`passwordFile`, its first line), the CA certificates (`ca`) and the key
 * that seals the secrets kept in the store (`keyFile`). Called
 * when a configuration is loaded to start, to reload or for
 * --check-config, so that a file that cannot be read refuses it; the
 * primary reads them again when it connects. The texts never go to the
 * workers, which do not talk to the store.
 * @param {string} file the configuration file, for the message
 * @param {object} config loaded (absolute paths)
 * @returns {Promise<{password: string|null, ca: string|null, key: Buffer|null}|null>} null without `store`
 * @throws {SvrError} SVR_ERR_CONFIG_INVALID naming /store/passwordFile, /store/ca or /store/keyFile
 */
async function readStoreSecrets (file, config) {
  const { store } = config
  if (store === null) return null
  const problems = []
  const password = store.passwordFile === null ? null : await readFirstLine(store.passwordFile, '/store/passwordFile', problems)
  const ca = store.ca === null ? null : await readPem(store.ca, problems)
  const key = await readKey(store.keyFile, problems)
  if (problems.length !== 0) throw invalidConfig(file, problems)
  return { password, ca, key }
}

async function readFirstLine (path, pointer, problems) {
  try {
    const line = (await fs.readFile(path, 'utf8')).split(/\r?\n/)[0]
    if (line === '') problems.push(pointer + ': ' + path + ' is empty; its first line is the password')
    return line
  } catch (err) {
    problems.push(pointer + ': cannot read ' + path + ': ' + err.code)
    return null
  }
}

async function readPem (path, problems) {
  try {
    const text = await fs.readFile(path, 'utf8')
    if (!text.includes('-----BEGIN CERTIFICATE-----')) problems.push('/store/ca: ' + path + ' holds no PEM certificate')
    return text
  } catch (err) {
    problems.push('/store/ca: cannot read ' + path + ': ' + err.code)
    return null
  }
}

async function readKey (path, problems) {
  try {
    return await readStoreKey(path)
  } catch (err) {
    problems.push('/store/keyFile: ' + (err.code === undefined ? err.message : 'cannot read ' + path + ' (' + err.code + ')'))
    return null
  }
}

module.exports = { readStoreSecrets }
