'use strict'

/**
 * Messages between the primary and its workers are plain objects tagged with
 * a namespace, so traffic that a mod or script sends over the same channel
 * with process.send() can never be mistaken for ours.
 */
const NS = 'svr'

/**
 * @param {string} act
 * @param {object} [fields]
 * @returns {{ns: string, act: string}}
 */
function message (act, fields) {
  return Object.assign({ ns: NS, act }, fields)
}

/**
 * Route a message to the handler registered for its act. Messages of other
 * senders and unknown acts are ignored, so older and newer processes can
 * share a channel during a rolling reload.
 * @param {Object<string, Function>} table act -> handler(msg, ...extra)
 * @param {*} msg
 * @returns {boolean} whether a handler ran
 */
function dispatch (table, msg, ...extra) {
  if (msg === null || typeof msg !== 'object' || msg.ns !== NS) return false
  if (!Object.hasOwn(table, msg.act)) return false
  table[msg.act](msg, ...extra)
  return true
}

module.exports = { NS, message, dispatch }
