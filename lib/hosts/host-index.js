'use strict'

const { parseHostPattern, compileLocalIpMatcher } = require('./vhost')

const NOT_FOUND = -1

/**
 * Virtual-host entries (every list whose entries carry `host` and `ip`)
 * found by a map on the host name instead of a loop over every entry:
 * exact names by the name, `*.example.com` entries by their apex (looked up
 * for the name and each of its parent domains), entries for every host
 * always. The first fitting entry in configuration order wins, as in the
 * loop: the lists are ascending, and only the first entry of each list
 * whose `ip` fits can win.
 */
class HostIndex {
  /**
   * @param {Array<{host?: string, ip?: string} | null>} entries in
   *   configuration order; a null entry is left out (it never fits)
   */
  constructor (entries) {
    this.exact = new Map()
    this.wildcard = new Map()
    this.any = []
    this.ip = entries.map((entry) => entry === null ? null : compileLocalIpMatcher(entry.ip))
    entries.forEach((entry, number) => {
      if (entry === null) return
      const parsed = parseHostPattern(entry.host)
      if (parsed === null) {
        this.any.push(number)
        return
      }
      const map = parsed.wildcard ? this.wildcard : this.exact
      const list = map.get(parsed.name)
      if (list === undefined) map.set(parsed.name, [number])
      else list.push(number)
    })
  }

  /**
   * @param {string} hostname lower-cased, without port (ctx.hostname)
   * @param {string} localAddress the address the client connected to
   * @returns {number} the number of the first entry that applies, -1 for none
   */
  first (hostname, localAddress) {
    let best = this.firstIn(this.any, localAddress, NOT_FOUND)
    best = this.firstIn(this.exact.get(hostname), localAddress, best)
    if (this.wildcard.size === 0) return best
    best = this.firstIn(this.wildcard.get(hostname), localAddress, best)
    for (let dot = hostname.indexOf('.'); dot !== -1; dot = hostname.indexOf('.', dot + 1)) {
      best = this.firstIn(this.wildcard.get(hostname.slice(dot + 1)), localAddress, best)
    }
    return best
  }

  /**
   * @param {string} hostname lower-cased, without port (ctx.hostname)
   * @param {string} localAddress the address the client connected to
   * @returns {number[]} the numbers of every entry that applies, ascending
   */
  all (hostname, localAddress) {
    const found = []
    this.allIn(this.any, localAddress, found)
    this.allIn(this.exact.get(hostname), localAddress, found)
    if (this.wildcard.size !== 0) {
      this.allIn(this.wildcard.get(hostname), localAddress, found)
      for (let dot = hostname.indexOf('.'); dot !== -1; dot = hostname.indexOf('.', dot + 1)) {
        this.allIn(this.wildcard.get(hostname.slice(dot + 1)), localAddress, found)
      }
    }
    // Each number sits in one list only, so the union has no repeats.
    return found.sort((a, b) => a - b)
  }

  // The earlier of `best` and the first entry of `list` whose ip fits.
  firstIn (list, localAddress, best) {
    if (list === undefined) return best
    for (const number of list) {
      if (best !== NOT_FOUND && number >= best) return best
      if (this.fits(number, localAddress)) return number
    }
    return best
  }

  allIn (list, localAddress, found) {
    if (list === undefined) return
    for (const number of list) if (this.fits(number, localAddress)) found.push(number)
  }

  fits (number, localAddress) {
    const ip = this.ip[number]
    return ip === null || ip(localAddress)
  }
}

module.exports = { HostIndex }
