'use strict'

/**
 * The certificate authorities automatic HTTPS orders from, in order: the
 * entries of `acme.issuers`, or else one made of `directoryUrl`, `eab`,
 * `keyType` and `profile`. An entry's null `keyType` or `profile` takes the
 * top-level one; `eab` belongs to one CA and is never inherited.
 * @param {object} acme the configuration's `acme`, with defaults
 * `setting` and `pointer` name the entry in messages ("acme.issuers[1]").
 * @returns {Array<{key: string, setting: string, pointer: string, directoryUrl: string, eab: object|null, keyType: string, profile: string|null}>}
 */
function acmeIssuers (acme) {
  const listed = acme.issuers === null
    ? [{ directoryUrl: acme.directoryUrl, eab: acme.eab, keyType: null, profile: null }]
    : acme.issuers
  return listed.map((issuer, i) => ({
    key: issuerKey(issuer.directoryUrl),
    setting: acme.issuers === null ? 'acme' : 'acme.issuers[' + i + ']',
    pointer: acme.issuers === null ? '/acme' : '/acme/issuers/' + i,
    directoryUrl: issuer.directoryUrl,
    eab: issuer.eab,
    keyType: issuer.keyType === null ? acme.keyType : issuer.keyType,
    profile: issuer.profile === null ? acme.profile : issuer.profile
  }))
}

/**
 * What an issuer's account, certificates and locks are kept under, in the
 * storage directory and in a fleet store: its directory URL's host, port
 * and path, as Caddy names its issuer folders, so that certificates of a
 * staging CA are never served once production is configured.
 * @param {string} directoryUrl
 * @returns {string} e.g. "acme-v02.api.letsencrypt.org-directory"
 */
function issuerKey (directoryUrl) {
  let url
  try {
    url = new URL(directoryUrl)
  } catch {
    return 'invalid'
  }
  const key = (url.host + url.pathname).replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '')
  return key === '' ? 'invalid' : key
}

/**
 * The configuration problems of `acme.issuers` beyond its schema: two
 * entries for one CA would share their storage.
 * @param {object} acme
 * @returns {string[]} "<JSON pointer>: <message>" lines
 */
function issuersProblems (acme) {
  if (!Array.isArray(acme.issuers)) return []
  const seen = new Map()
  const problems = []
  acme.issuers.forEach((issuer, i) => {
    if (issuer === null || typeof issuer !== 'object' || typeof issuer.directoryUrl !== 'string') return
    const key = issuerKey(issuer.directoryUrl)
    if (seen.has(key)) problems.push('/acme/issuers/' + i + '/directoryUrl: the same CA as /acme/issuers/' + seen.get(key) + ' (list each CA once)')
    else seen.set(key, i)
  })
  return problems
}

/**
 * The directory URLs of `acme` with their JSON pointers, to check each.
 * @param {object} acme
 * @returns {Array<{pointer: string, url: *}>}
 */
function directoryUrls (acme) {
  if (!Array.isArray(acme.issuers)) return [{ pointer: '/acme/directoryUrl', url: acme.directoryUrl }]
  return acme.issuers.map((issuer, i) => ({ pointer: '/acme/issuers/' + i + '/directoryUrl', url: issuer === null || typeof issuer !== 'object' ? undefined : issuer.directoryUrl }))
}

module.exports = { acmeIssuers, issuerKey, issuersProblems, directoryUrls }
