'use strict'

const net = require('node:net')

const DNS_PORT = 53
const BRACKETED = /^\[([^\]]+)\](?::(\d{1,5}))?$/
const IPV4_PORT = /^([^:]+):(\d{1,5})$/

/**
 * A DNS server of acme.dns (`server`, `resolvers`): an IP address, with
 * ":port" when not 53 ("[v6]:port" for IPv6).
 * @param {string} text
 * @returns {{host: string, port: number}|null} null when it is none
 */
function parseDnsServer (text) {
  if (net.isIP(text) !== 0) return { host: text, port: DNS_PORT }
  const bracketed = BRACKETED.exec(text)
  const match = bracketed !== null ? bracketed : IPV4_PORT.exec(text)
  if (match === null || net.isIP(match[1]) !== (bracketed !== null ? 6 : 4)) return null
  const port = match[2] === undefined ? DNS_PORT : Number(match[2])
  return port <= 65535 ? { host: match[1], port } : null
}

/**
 * The names a record's zone may be, closest first: every parent of fqdn
 * down to its last two labels ("_acme-challenge.www.example.com" →
 * "www.example.com", "example.com").
 * @param {string} fqdn
 * @returns {string[]}
 */
function enclosingZones (fqdn) {
  const labels = fqdn.split('.')
  const zones = []
  for (let i = 1; i < labels.length - 1; i++) zones.push(labels.slice(i).join('.'))
  return zones
}

module.exports = { parseDnsServer, enclosingZones }
