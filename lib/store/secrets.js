'use strict'

const fs = require('node:fs/promises')
const { invalidConfig } = require('../errors')

/**
 * Read what the store's connection needs from files: the password
 * (`passwordFile`, its first line) and the CA certificates (`ca`). Called
 * when a configuration is loaded to start, to reload or for
 * --check-config, so that a file that cannot be read refuses it; the
 * primary reads them again when it connects. The texts never go to the
 * workers, which do not talk to the store.
 * @param {string} file the configuration file, for the message
 * @param {object} config loaded (absolute paths)
 * @returns {Promise<{password: string|null, ca: string|null}|null>} null without `store`
 * @throws {SvrError} SVR_ERR_CONFIG_INVALID naming /store/passwordFile or /store/ca
 */
async function readStoreSecrets (file, config) {
  const { store } = config
  if (store === null) return null
  const problems = []
  const password = store.passwordFile === null ? null : await readFirstLine(store.passwordFile, '/store/passwordFile', problems)
  const ca = store.ca === null ? null : await readPem(store.ca, problems)
  if (problems.length !== 0) throw invalidConfig(file, problems)
  return { password, ca }
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

module.exports = { readStoreSecrets }
