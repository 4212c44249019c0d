'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const tar = require('tar')

/**
 * Pack an SVR.JS 3.x mod (index.js, mod.info and any other files) into
 * `<modsDir>/<name>`, a .tar.gz with the files at its top level.
 * @param {string} modsDir
 * @param {string} name e.g. '00-first.tar.gz'
 * @param {string} indexJs
 * @param {object} [info] the mod.info object; none when undefined
 * @param {Object<string, string>} [extra] more files: name -> content
 */
async function packLegacyMod (modsDir, name, indexJs, info, extra = {}) {
  const src = await fs.mkdtemp(path.join(modsDir, '..', 'src-'))
  try {
    const files = { 'index.js': indexJs, ...extra }
    if (info !== undefined) files['mod.info'] = JSON.stringify(info)
    for (const [file, content] of Object.entries(files)) await fs.writeFile(path.join(src, file), content)
    await tar.c({ gzip: true, file: path.join(modsDir, name), cwd: src }, Object.keys(files))
  } finally {
    await fs.rm(src, { recursive: true, force: true })
  }
}

module.exports = { packLegacyMod }
