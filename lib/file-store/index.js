'use strict'

const fs = require('node:fs/promises')
const { createCompression } = require('../static/compression')
const { createBodyCache } = require('./bodies')
const { createIndexFinder } = require('./index-files')
const { createJudge } = require('./judge')
const { createResolver } = require('./resolve')
const { createSidecarFinder } = require('./sidecars')
const { createStatCache } = require('./stats')
const { createSymlinkPolicy, rememberVerdicts } = require('./symlinks')

const INDEX_FILES = ['index.html', 'index.htm', 'index.xhtml']
// Entries of the metadata caches: a few hundred bytes each, so that these
// bounds cost a few MiB per worker at most; bodies have fileCacheSize.
const MAX_PATHS = 4096
const MAX_DIRECTORIES = 1024

/**
 * The file store of a worker: what it knows of the webroot's files (stats,
 * index files, followSymlinks verdicts, precompressed sidecars, and the
 * bodies of small files), all under one freshness policy, `fileCacheTtl`:
 * nothing learnt from the disk is used longer than that without asking it
 * again. Bodies share one budget, `fileCacheSize`. It answers a request
 * for a file with a Representation, which lib/static/writer.js sends.
 * @param {object} config the validated config
 * @param {{clock?: {now: () => number}}} [options] for tests: a clock of their own
 */
function createFileStore (config, { clock } = {}) {
  const ttl = config.fileCacheTtl
  const stats = createStatCache({ ttl, maxEntries: MAX_PATHS, clock })
  const mayFollow = rememberVerdicts(createSymlinkPolicy(config.followSymlinks, config.wwwroot), { ttl, maxEntries: MAX_PATHS })
  const compression = createCompression(config)
  // Sidecars are judged on stats of their own, so a remembered verdict
  // holds only for the file it was given on.
  const sidecars = compression === null
    ? null
    : createSidecarFinder(mayFollow === null ? null : (file) => fs.stat(file).then((stat) => mayFollow(file, stat)), { ttl, maxEntries: MAX_PATHS })
  const findIndex = createIndexFinder(INDEX_FILES, { ttl, maxEntries: MAX_DIRECTORIES })
  const bodies = createBodyCache({ maxFileBytes: config.fileCacheMaxFileSize, maxBytes: config.fileCacheSize, ttl, clock })

  const judge = createJudge(stats, mayFollow)
  const { held, resolve } = createResolver({ judge, bodies, compression, sidecars })

  return {
    /** @type {(file: string) => Promise<import('node:fs').Stats|null>} may be up to fileCacheTtl old */
    stat: (file) => stats.lookup(file).promise,
    /** @type {(file: string) => import('node:fs').Stats|null|undefined} settled stats, without waiting */
    peekStat: stats.peek,
    /** @type {(file: string) => Promise<import('node:fs').Stats|null>} taken now */
    freshStat: stats.fresh,
    findIndex,
    held,
    resolve,
    judgeDirectory: judge.directory
  }
}

module.exports = { createFileStore }
