'use strict'

const SPECIAL = /["&'<>]/
const ENTITIES = { '"': '&quot;', '&': '&amp;', "'": '&#39;', '<': '&lt;', '>': '&gt;' }
const SPECIAL_ALL = /["&'<>]/g

function entity (ch) {
  return ENTITIES[ch]
}

/**
 * Escape text for HTML element content and quoted attribute values.
 * @param {*} value
 * @returns {string}
 */
function escapeHtml (value) {
  const text = String(value)
  return SPECIAL.test(text) ? text.replace(SPECIAL_ALL, entity) : text
}

module.exports = { escapeHtml }
