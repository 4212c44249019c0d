'use strict'

const { algorithmOf } = require('../auth/hash')

// Basic authentication splits at the first ":"; control characters cannot
// be typed into a browser's login dialog.
const BAD_NAME = /[:\x00-\x1f\x7f]/ // eslint-disable-line no-control-regex

/**
 * @param {string} name
 * @returns {string|null} why the name cannot be a user name, or null
 */
function nameProblem (name) {
  if (typeof name !== 'string' || name === '') return 'a user name is required'
  if (BAD_NAME.test(name)) return 'a user name cannot contain ":" or control characters'
  return null
}

/**
 * @param {object[]} users the config's `users`
 * @param {object} record a new record
 * @returns {object[]} a new array with the record appended
 * @throws {Error} when the name exists
 */
function addUser (users, record) {
  if (findUser(users, record.name) !== -1) throw new Error('user ' + JSON.stringify(record.name) + ' already exists (use "change")')
  return [...users, record]
}

/**
 * Replace a user's record in place (the server uses the first record of a
 * name, so that is the one replaced; later duplicates go).
 * @param {object[]} users
 * @param {object} record
 * @returns {object[]} a new array
 * @throws {Error} when the name does not exist
 */
function changeUser (users, record) {
  const index = findUser(users, record.name)
  if (index === -1) throw unknownUser(record.name)
  return users.flatMap((user, i) => i === index ? [record] : i > index && user.name === record.name ? [] : [user])
}

/**
 * @param {object[]} users
 * @param {string} name
 * @returns {object[]} a new array without any record of that name
 * @throws {Error} when the name does not exist
 */
function deleteUser (users, name) {
  if (findUser(users, name) === -1) throw unknownUser(name)
  return users.filter((user) => user.name !== name)
}

/**
 * @param {object[]} users
 * @returns {string[]} "name<TAB>algorithm" per record
 */
function listUsers (users) {
  return users.map((user) => user.name + '\t' + algorithmOf(user))
}

function findUser (users, name) {
  return users.findIndex((user) => user !== null && typeof user === 'object' && user.name === name)
}

function unknownUser (name) {
  return new Error('no user ' + JSON.stringify(name) + ' (use "add")')
}

module.exports = { nameProblem, addUser, changeUser, deleteUser, listUsers }
