'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const tls = require('node:tls')
const { invalidConfig } = require('../errors')

/**
 * Read the CA files of the proxy routes (`tls.ca`) once, when a
 * configuration is loaded to start, to reload or for --check-config. The
 * primary hands the texts to its workers with the runtime options (workers
 * read no configured files, as with certificates), and they travel from
 * there to its active health checks.
 * @param {string} file the configuration file, for the message
 * @param {object} config loaded (absolute paths)
 * @returns {Promise<Array<string[]|null>>} per route, the PEM text of each
 *   file; null where the route has no `tls.ca`
 * @throws {SvrError} SVR_ERR_CONFIG_INVALID naming /proxy/N/tls/ca (or
 *   /proxy/N/tls/ca/M in a list) of every file that is not a readable PEM
 *   file of certificates
 */
async function readProxyCa (file, config) {
  const problems = []
  const texts = new Map()
  const perRoute = []
  for (const [number, route] of config.proxy.entries()) {
    const { ca } = route.tls
    if (ca === null) {
      perRoute.push(null)
      continue
    }
    const files = Array.isArray(ca) ? ca : [ca]
    const pems = []
    for (const [index, caFile] of files.entries()) {
      const pointer = '/proxy/' + number + '/tls/ca' + (Array.isArray(ca) ? '/' + index : '')
      if (!texts.has(caFile)) texts.set(caFile, await readCertificates(caFile))
      const read = texts.get(caFile)
      if (read.problem !== null) problems.push(pointer + ': ' + caFile + ' is not a readable PEM file of certificates (' + read.problem + ')')
      else pems.push(read.text)
    }
    perRoute.push(pems)
  }
  if (problems.length !== 0) throw invalidConfig(file, problems)
  return perRoute
}

/**
 * @param {string} caFile
 * @returns {Promise<{text: string, problem: null} | {text: null, problem: string}>}
 */
async function readCertificates (caFile) {
  try {
    const text = await fs.readFile(caFile, 'utf8')
    // X509Certificate parses the first certificate of the file, and throws without one.
    tls.createSecureContext({ ca: text })
    new crypto.X509Certificate(text)
    return { text, problem: null }
  } catch (err) {
    return { text: null, problem: err.code || err.message }
  }
}

module.exports = { readProxyCa }
