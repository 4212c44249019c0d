'use strict'

// Mutations of the area 'acme' (see scripts/mutations.js for the fields).

const STORE = ['test/tls/acme-store-failure.test.js']
const LOCK = ['test/unit/acme-lock.test.js']
const RENEWAL = ['test/unit/acme-renewal.test.js']
const ARI = ['test/unit/acme-ari.test.js', 'test/tls/acme-ari.test.js']

module.exports = [
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'the order lock is released only after a successful order (a failed store keeps it, and the next attempt waits on it)',
    find: '    } finally {\n      state.ordering = false\n',
    replace: '    } catch (err) {\n      state.ordering = false\n      throw err\n    }\n    {\n      state.ordering = false\n',
    tests: STORE
  },
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'a name stays marked as ordering after a failed attempt, so it is never ordered again',
    find: '    } finally {\n      state.ordering = false\n',
    replace: '    } finally {\n',
    tests: STORE
  },
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'a failure outside the CA steps (storage) is logged but never retried',
    find: 'this.check(name).catch((err) => this.failed(name, state, err, this.certificates.has(name)))',
    replace: "this.check(name).catch((err) => this.log.error('acme: ' + name + ': ' + err.message))",
    tests: STORE
  },
  {
    area: 'acme',
    file: 'lib/acme/storage.js',
    what: 'the certificate directory of a new name is not made before its files are written',
    find: '    await fs.mkdir(dir, { recursive: true, mode: DIR_MODE })\n    await writeAtomic(',
    replace: '    await writeAtomic(',
    tests: STORE
  },
  {
    area: 'acme',
    file: 'lib/acme/storage.js',
    what: 'a stored key that is not its certificate\'s (a store cut short) is loaded and served, failing every handshake',
    find: 'if (dates === null || !pairMatches(cert, key)) return null',
    replace: 'if (dates === null) return null',
    tests: STORE
  },
  {
    area: 'acme',
    file: 'lib/acme/lock.js',
    what: 'an expired lock of a crashed holder counts as held forever',
    find: 'if (holder.expires > Date.now()) return { acquired: false, holder }',
    replace: 'if (holder.expires > 0) return { acquired: false, holder }',
    tests: LOCK
  },
  {
    area: 'acme',
    file: 'lib/acme/lock.js',
    what: 'release removes the lock whoever holds it',
    find: 'if (current !== null && current.owner === this.owner) await fs.rm(this.file, { force: true })',
    replace: 'if (current !== null) await fs.rm(this.file, { force: true })',
    tests: LOCK
  },
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'orders start before any worker listens, so the CA validates on ports that refuse',
    find: 'this.loaded.then(() => this.listening).then(() => {',
    replace: 'this.loaded.then(() => {',
    tests: ['test/tls/acme-http01.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/renewal.js',
    what: 'renewBeforeDays is off by one day (renewal a day late)',
    find: 'renewBeforeDays * DAY_MS',
    replace: '(renewBeforeDays - 1) * DAY_MS',
    tests: LOCK
  },
  {
    area: 'acme',
    file: 'lib/acme/renewal.js',
    what: 'a renewBeforeDays over the lifetime renews at once (no hold at half)',
    find: '  if (margin <= lifetime * LARGEST_SHARE) return { at: notAfter - margin, clamped: false }\n',
    replace: '  if (true) return { at: notAfter - margin, clamped: false }\n',
    tests: RENEWAL
  },
  {
    area: 'acme',
    file: 'lib/acme/renewal.js',
    what: 'one order a name over the hourly ceiling',
    find: '    if (times.length >= MAX_ORDERS_PER_HOUR) {\n',
    replace: '    if (times.length > MAX_ORDERS_PER_HOUR) {\n',
    tests: RENEWAL
  },
  {
    area: 'acme',
    file: 'lib/acme/renewal.js',
    what: '--check-config accepts renewBeforeDays 90',
    find: 'renewBeforeDays < LONGEST_LIFETIME_DAYS) return null',
    replace: 'renewBeforeDays <= LONGEST_LIFETIME_DAYS) return null',
    tests: ['test/tls/acme-config.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'the CA\'s renewal window is never asked for',
    find: 'this.dueAt(name, current, await this.windows.due(name, current, Date.now()))',
    replace: 'this.dueAt(name, current)',
    tests: ARI
  },
  {
    area: 'acme',
    file: 'lib/acme/ari.js',
    what: 'a renewal window as wide as the lifetime renews a certificate just issued',
    find: 'Math.max(window.start, notBefore + (notAfter - notBefore) * LARGEST_SHARE)',
    replace: 'window.start',
    tests: ARI
  },
  {
    area: 'acme',
    file: 'lib/acme/names.js',
    what: 'http-01 kept without the plain-HTTP server',
    find: "type === 'http-01' ? data.disableNonEncryptedServer !== true : ",
    replace: "type === 'http-01' ? true : ",
    tests: ['test/tls/acme-config.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/client.js',
    what: 'no fallback to the next challenge when the CA refuses one',
    find: '        if (i === types.length - 1 || !this.orderPlaced || NOT_THE_CHALLENGE.has(err.code) || rateLimited(err)) throw err\n',
    replace: '        throw err\n',
    tests: ['test/tls/acme-challenge-fallback.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/client.js',
    what: 'the challenge that worked is not tried first next time',
    find: '        this.worked.set(name, types[i])\n',
    replace: '',
    tests: ['test/tls/acme-challenge-fallback.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/client.js',
    what: 'a CA certificate that does not verify reported as a CA that cannot be reached',
    find: "      if (TLS_TRUST_CODES.has(code)) throw svrError('SVR_ERR_ACME_UNTRUSTED', [code + ': ' + message.split('; ')[0]], { cause: err })\n",
    replace: '',
    tests: ['test/tls/acme-failures.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/client.js',
    what: 'acme.keyType rsa2048 orders an ECDSA certificate',
    find: "    case 'rsa2048': return acme.crypto.createPrivateRsaKey(2048)\n",
    replace: '',
    tests: ['test/tls/acme-keytype.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/failures.js',
    what: 'a CA that cannot reach the challenge port is not explained',
    find: '    pattern: /connection refused|timeout during connect|i\\/o timeout|connection reset|no route to host|network is unreachable/i,\n',
    replace: '    pattern: /^$/,\n',
    tests: ['test/unit/acme-failures.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/issuer-chain.js',
    what: 'an order the first CA refuses is not taken to the next CA',
    find: '        continue\n',
    replace: '        throw err\n',
    tests: ['test/tls/acme-issuers.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/storage.js',
    what: 'every CA shares one folder, so a switch of CA keeps serving the old CA\'s certificate',
    find: '    this.issuerDir = path.join(dir, issuer)\n',
    replace: '    this.issuerDir = dir\n',
    tests: ['test/tls/acme-issuers.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'the certificate of a CA switched away from is kept until its own renewal',
    find: '    if (!this.issuers.has(certificate.issuer)) return 0\n',
    replace: '',
    tests: ['test/tls/acme-issuers.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/client.js',
    what: 'acme.profile is not sent with the order',
    find: 'profile === null ? data : { ...data, profile }',
    replace: 'data',
    tests: ['test/tls/acme-issuers.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/client.js',
    what: 'an order the CA refused outright is placed again with the other challenge',
    find: 'i === types.length - 1 || !this.orderPlaced || ',
    replace: 'i === types.length - 1 || ',
    tests: ['test/tls/acme-issuers.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/issuers.js',
    what: 'an issuer without its own keyType ignores acme.keyType',
    find: 'keyType: issuer.keyType === null ? acme.keyType : issuer.keyType,',
    replace: 'keyType: issuer.keyType,',
    tests: ['test/unit/acme-issuers.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/storage.js',
    what: 'the certificate an earlier build kept at the top of the storage is not served while the new order runs',
    find: "    const folders = ['', ...entries",
    replace: '    const folders = [...entries',
    tests: ['test/unit/acme-storage-leftover.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/storage.js',
    what: 'an expired certificate of another CA is served after a switch',
    find: 'if (pair !== null && pair.notAfter > Date.now() && (newest === null',
    replace: 'if (pair !== null && (newest === null',
    tests: ['test/unit/acme-storage-leftover.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/worker.js',
    what: 'a wildcard certificate covers names two labels down',
    find: "    const wildcard = '*' + servername.slice(dot)\n",
    replace: "    const wildcard = '*' + servername.slice(servername.indexOf('.', dot + 1) > 0 ? servername.indexOf('.', dot + 1) : dot)\n",
    tests: ['test/unit/acme-dns.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/dns/index.js',
    what: 'the dns-01 record is not removed after the validation',
    find: '    await this.provider.cleanup(fqdn, value).catch(',
    replace: '    await Promise.resolve().catch(',
    tests: ['test/tls/acme-dns.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/dns/index.js',
    what: 'the CA is told to look before the dns-01 record is out',
    find: '    await waitForRecord(fqdn, value, servers, this.settings.propagationTimeout)\n',
    replace: '',
    tests: ['test/tls/acme-dns.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/dns/index.js',
    what: 'a record that could not be put up is removed all the same',
    find: "    if (!this.open.delete(fqdn + ' ' + value)) return\n",
    replace: '',
    tests: ['test/tls/acme-dns.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/dns/index.js',
    what: 'the record of a wildcard is put under "*."',
    find: "  return '_acme-challenge.' + name.replace(/^\\*\\./, '')\n",
    replace: "  return '_acme-challenge.' + name\n",
    tests: ['test/unit/acme-dns.test.js', 'test/tls/acme-dns.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/on-demand.js',
    what: 'every handshake for a new name asks and orders for itself',
    find: '    return singleFlight(this.pending, name, () => this.obtain(name).catch((err) => {\n',
    replace: '    return ((start) => start())(() => this.obtain(name).catch((err) => {\n',
    tests: ['test/tls/acme-on-demand.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/on-demand.js',
    what: 'the ask endpoint\'s refusal is not heeded',
    find: '    return (await this.ask(name)).why\n',
    replace: '    await this.ask(name)\n    return null\n',
    tests: ['test/tls/acme-on-demand.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/on-demand.js',
    what: 'one new name more than maxNewNamesPerMinute is ordered',
    find: 'if (this.started.length >= this.settings.maxNewNamesPerMinute) {',
    replace: 'if (this.started.length > this.settings.maxNewNamesPerMinute) {',
    tests: ['test/tls/acme-on-demand.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/on-demand.js',
    what: 'a refused name is asked about again at each handshake',
    find: '    if (Date.now() < (this.refused.get(name) ?? 0)) return null\n',
    replace: '',
    tests: ['test/tls/acme-on-demand.test.js']
  },
  {
    area: 'acme',
    file: 'lib/tls/options.js',
    what: 'a name refused on demand gets the default certificate',
    find: "found === null ? callback(new Error('no certificate for ' + name)) : callback(null, found)",
    replace: 'callback(null, found || undefined)',
    tests: ['test/tls/acme-on-demand.test.js']
  },
  {
    area: 'acme',
    file: 'lib/acme/manager.js',
    what: 'a certificate got on demand is renewed without asking again',
    find: ' && !(await this.onDemand.mayRenew(name))) return\n',
    replace: ' && false) return\n',
    tests: ['test/tls/acme-on-demand.test.js']
  }
]
