'use strict'

const mime = require('mime-types')

// Icons drawn here as small SVGs and used as CSS background images (data:
// URLs), so a listing is one self-contained response that a strict
// Content-Security-Policy (img-src data:) allows.

const PAGE = "<path d='M5 2h9l5 5v15H5z' fill='#fff' stroke='#8a8f98'/><path d='M14 2v5h5' fill='none' stroke='#8a8f98'/>"

/** [class suffix, title, label on the page icon, label colour] per file category */
const FILE_ICONS = [
  ['file', 'File', '', '#8a8f98'],
  ['text', 'Text file', 'TXT', '#5f7481'],
  ['html', 'HTML document', 'HTML', '#d2492a'],
  ['css', 'Stylesheet', 'CSS', '#2a6fd2'],
  ['js', 'Script', 'JS', '#b48a00'],
  ['data', 'Data file', '{ }', '#6a5acd'],
  ['image', 'Image', 'IMG', '#2e9d58'],
  ['audio', 'Audio', 'AUD', '#c03a8a'],
  ['video', 'Video', 'VID', '#8e44ad'],
  ['archive', 'Archive', 'ZIP', '#a0642b'],
  ['font', 'Font', 'Aa', '#444c56'],
  ['pdf', 'PDF document', 'PDF', '#c62828'],
  ['doc', 'Office document', 'DOC', '#2b579a'],
  ['disk', 'Disk image', 'ISO', '#546e7a'],
  ['important', 'Read me', '!', '#e0a800']
]

const OTHER_ICONS = [
  ['dir', 'Directory', "<path d='M2 6.5A1.5 1.5 0 0 1 3.5 5H9l2 2h9.5A1.5 1.5 0 0 1 22 8.5v10a1.5 1.5 0 0 1-1.5 1.5h-17A1.5 1.5 0 0 1 2 18.5z' fill='#e8b339'/><path d='M2 9h20' stroke='#c99522'/>"],
  ['up', 'Parent directory', "<path d='M12 4l-7 7h4.5v8h5v-8H19z' fill='#5f7481'/>"],
  ['broken', 'Broken link', PAGE + "<path d='M8 11l8 8M16 11l-8 8' stroke='#c62828' stroke-width='2.2'/>"],
  ['device', 'Device', "<rect x='4' y='5' width='16' height='14' rx='2' fill='#607d8b'/><path d='M8 9h8M8 12h8M8 15h5' stroke='#fff'/>"],
  ['special', 'Pipe or socket', "<circle cx='12' cy='12' r='8' fill='none' stroke='#607d8b' stroke-width='2'/><circle cx='12' cy='12' r='3' fill='#607d8b'/>"]
]

const BY_TYPE = new Map([
  ['text/html', 'html'],
  ['application/xhtml+xml', 'html'],
  ['text/css', 'css'],
  ['text/javascript', 'js'],
  ['application/javascript', 'js'],
  ['application/x-sh', 'js'],
  ['application/json', 'data'],
  ['application/xml', 'data'],
  ['text/xml', 'data'],
  ['text/csv', 'data'],
  ['text/yaml', 'data'],
  ['application/yaml', 'data'],
  ['application/toml', 'data'],
  ['application/pdf', 'pdf'],
  ['application/zip', 'archive'],
  ['application/gzip', 'archive'],
  ['application/x-gzip', 'archive'],
  ['application/x-tar', 'archive'],
  ['application/x-7z-compressed', 'archive'],
  ['application/x-rar-compressed', 'archive'],
  ['application/vnd.rar', 'archive'],
  ['application/x-bzip', 'archive'],
  ['application/x-bzip2', 'archive'],
  ['application/x-xz', 'archive'],
  ['application/zstd', 'archive'],
  ['application/java-archive', 'archive'],
  ['application/x-iso9660-image', 'disk'],
  ['application/x-apple-diskimage', 'disk'],
  ['application/msword', 'doc'],
  ['application/rtf', 'doc'],
  ['application/vnd.ms-excel', 'doc'],
  ['application/vnd.ms-powerpoint', 'doc']
])
const BY_MAJOR = new Map([['image', 'image'], ['audio', 'audio'], ['video', 'video'], ['font', 'font'], ['text', 'text']])
const DOC_PREFIXES = ['application/vnd.openxmlformats-officedocument.', 'application/vnd.oasis.opendocument.']
const IMPORTANT = /^(?:readme|licen[cs]e|copying|changelog|changes|history)(?:\.|$)/i

const TITLES = new Map()
for (const [key, title] of FILE_ICONS) TITLES.set(key, title)
for (const [key, title] of OTHER_ICONS) TITLES.set(key, title)

function fileSvg (label, color) {
  if (label === '') return PAGE
  const size = label.length > 3 ? 4.6 : 5.6
  return PAGE + "<rect x='3' y='12' width='16' height='7.5' rx='1.2' fill='" + color + "'/>" +
    "<text x='11' y='17.8' font-family='Arial,sans-serif' font-weight='700' font-size='" + size +
    "' fill='#fff' text-anchor='middle'>" + label + '</text>'
}

// Inside url("…") only these need escaping; the SVGs use single quotes.
const URL_UNSAFE = /[%#<>"]/g

function iconRule (key, shapes) {
  const svg = "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24'>" + shapes + '</svg>'
  const data = svg.replace(URL_UNSAFE, (ch) => '%' + ch.charCodeAt(0).toString(16).toUpperCase())
  return '.i-' + key + '{background-image:url("data:image/svg+xml,' + data + '")}'
}

/** One CSS rule per icon key: `.i-<key>` draws it as the element's background. */
const ICON_RULES = new Map()
for (const [key, , label, color] of FILE_ICONS) ICON_RULES.set(key, iconRule(key, fileSvg(label, color)))
for (const [key, , shapes] of OTHER_ICONS) ICON_RULES.set(key, iconRule(key, shapes))

/**
 * The icon key for a listing entry.
 * @param {{name: string, kind: string}} entry
 * @returns {string} a key with a rule in ICON_CSS and a title in iconTitle
 */
function iconFor (entry) {
  switch (entry.kind) {
    case 'dir': return 'dir'
    case 'broken': return 'broken'
    case 'block':
    case 'char': return 'device'
    case 'fifo':
    case 'socket': return 'special'
  }
  if (IMPORTANT.test(entry.name)) return 'important'
  const type = mime.lookup(entry.name)
  if (type === false) return 'file'
  const known = BY_TYPE.get(type)
  if (known !== undefined) return known
  for (const prefix of DOC_PREFIXES) if (type.startsWith(prefix)) return 'doc'
  const major = BY_MAJOR.get(type.slice(0, type.indexOf('/')))
  return major === undefined ? 'file' : major
}

/**
 * @param {string} key from iconFor, or 'up'
 * @returns {string} a short description, for the icon's title
 */
function iconTitle (key) {
  return TITLES.get(key)
}

/**
 * @param {Iterable<string>} keys icon keys a page uses
 * @returns {string} the CSS that draws them
 */
function iconCss (keys) {
  let css = ''
  for (const key of keys) css += ICON_RULES.get(key)
  return css
}

module.exports = { iconFor, iconTitle, iconCss }
