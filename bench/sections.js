'use strict'

// The sections (`## Heading` up to the next `## `) of bench/results.md
// that separate runs write: the cost curves, the TLS and HTTP/2 rows.

/**
 * Put a section into a results file's text, in place of the one with the
 * same heading, or at its end.
 * @param {string|null} markdown the file's text, null when there is none
 * @param {string} heading e.g. '## Cost curves'
 * @param {string} section starting with the heading
 * @returns {string}
 */
function spliceSection (markdown, heading, section) {
  if (markdown === null || markdown.trim() === '') return '# Benchmark results\n\n' + section
  const start = markdown.indexOf('\n' + heading + '\n')
  if (start === -1) return markdown.replace(/\n*$/, '\n\n') + section
  const next = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(0, start + 1) + section + (next === -1 ? '' : '\n' + markdown.slice(next + 1))
}

/**
 * @param {string|null} markdown
 * @param {string} heading
 * @returns {string} the section with that heading, '' when there is none
 */
function sectionOf (markdown, heading) {
  if (markdown === null) return ''
  const start = markdown.indexOf('\n' + heading + '\n')
  if (start === -1) return ''
  const next = markdown.indexOf('\n## ', start + 1)
  return markdown.slice(start + 1, next === -1 ? markdown.length : next + 1)
}

module.exports = { spliceSection, sectionOf }
