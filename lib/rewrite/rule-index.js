'use strict'

const { requiredPrefix } = require('./literal-prefix')

const NONE = Object.freeze([])

/**
 * Rules grouped by the literal prefix their regex requires, so that a
 * request tries only the rules it can match: those whose prefix its URL
 * starts with, and those without a usable prefix, which are always tried.
 * The candidates come back in configuration order, so the first rule that
 * matches is the one the plain loop over every rule would find.
 *
 * Prefixes are kept by length, a map of prefix to rule numbers per length:
 * a lookup costs one slice and one map probe per distinct prefix length,
 * whatever the number of rules.
 */
class RuleIndex {
  /**
   * @param {RegExp[]} regexes the rules' regexes, in configuration order
   * @param {boolean[]} onCollapsed per rule: tested on the slash-collapsed URL
   */
  constructor (regexes, onCollapsed) {
    this.always = []
    // Four groups: (URL as is | slash-collapsed) × (exact | lower-cased).
    this.groups = [new PrefixGroup(false, false), new PrefixGroup(false, true), new PrefixGroup(true, false), new PrefixGroup(true, true)]
    regexes.forEach((regex, number) => {
      const found = requiredPrefix(regex)
      if (found === null) this.always.push(number)
      else this.groups[(onCollapsed[number] ? 2 : 0) + (found.foldCase ? 1 : 0)].add(found.prefix, number)
    })
    this.groups = this.groups.filter((group) => group.lengths.length !== 0)
    for (const group of this.groups) group.seal()
    this.indexed = regexes.length - this.always.length
  }

  /**
   * The numbers of the rules that may match, ascending.
   * @param {string} url path and query as the request has them
   * @param {() => string} collapsed the same with every run of slashes collapsed
   * @returns {readonly number[]}
   */
  candidates (url, collapsed) {
    if (this.indexed === 0) return this.always
    const lists = this.always.length === 0 ? [] : [this.always]
    for (const group of this.groups) {
      let input = group.onCollapsed ? collapsed() : url
      if (group.foldCase) input = input.toLowerCase()
      group.collect(input, lists)
    }
    if (lists.length === 0) return NONE
    if (lists.length === 1) return lists[0]
    return mergeAscending(lists)
  }
}

/** @private */
class PrefixGroup {
  constructor (onCollapsed, foldCase) {
    this.onCollapsed = onCollapsed
    this.foldCase = foldCase
    this.byLength = new Map()
    this.lengths = []
  }

  add (prefix, number) {
    let prefixes = this.byLength.get(prefix.length)
    if (prefixes === undefined) {
      prefixes = new Map()
      this.byLength.set(prefix.length, prefixes)
      this.lengths.push(prefix.length)
    }
    const numbers = prefixes.get(prefix)
    if (numbers === undefined) prefixes.set(prefix, [number])
    else numbers.push(number)
  }

  seal () {
    this.lengths.sort((a, b) => a - b)
  }

  collect (input, lists) {
    for (const length of this.lengths) {
      if (length > input.length) return
      const numbers = this.byLength.get(length).get(input.slice(0, length))
      if (numbers !== undefined) lists.push(numbers)
    }
  }
}

// The union of ascending lists of distinct numbers, ascending.
function mergeAscending (lists) {
  const all = [].concat(...lists)
  return all.sort((a, b) => a - b)
}

module.exports = { RuleIndex }
