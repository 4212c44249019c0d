'use strict'

const fs = require('node:fs/promises')
const path = require('node:path')
const zlib = require('node:zlib')
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

/**
 * A .tar.gz whose entries have exactly the given names, `..` and absolute
 * ones included (tar tools refuse to make those), as an attacker would.
 * @param {Array<[string, string]>} entries [name, content] pairs
 * @returns {Buffer}
 */
function rawTarGz (entries) {
  const blocks = []
  for (const [name, content] of entries) {
    const body = Buffer.from(content)
    const header = Buffer.alloc(512)
    header.write(name, 0, 100, 'utf8')
    header.write('0000644\0', 100)
    header.write('0000000\0', 108)
    header.write('0000000\0', 116)
    header.write(body.length.toString(8).padStart(11, '0') + '\0', 124)
    header.write('00000000000\0', 136)
    header.write('        ', 148)
    header.write('0', 156)
    header.write('ustar\0' + '00', 257)
    let sum = 0
    for (const byte of header) sum += byte
    header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148)
    blocks.push(header, body, Buffer.alloc((512 - body.length % 512) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return zlib.gzipSync(Buffer.concat(blocks))
}

module.exports = { packLegacyMod, rawTarGz }
