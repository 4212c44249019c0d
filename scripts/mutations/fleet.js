'use strict'

// Mutations of the area 'fleet' (see scripts/mutations.js for the fields).

const STORE = 'test/fleet/store.test.js'
const TICKETS = 'test/fleet/tickets.test.js'
const SENTINEL = 'test/fleet/sentinel.test.js'
const ACME = 'test/fleet/acme.test.js'

module.exports = [
  {
    area: 'fleet',
    file: 'lib/primary/supervisor.js',
    what: 'a worker started after the fleet\'s ticket keys arrived (a reload) keeps its own',
    find: "    if (this.fleetTicketKeys !== null) record.peer.notify('ticket-keys', { keys: this.fleetTicketKeys })\n",
    replace: '',
    tests: [TICKETS]
  },
  {
    area: 'fleet',
    file: 'lib/primary/coordinator.js',
    what: 'the login throttle stays per instance with a store configured',
    find: '    this.throttle = new FleetThrottle(store, throttleOptions(this))\n',
    replace: '',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/auth/fleet-throttle.js',
    what: 'a lock on the address + user counted against the address too (no refund in the store)',
    find: "  if tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'attempts', -1) end\n  return {byUser, 2}",
    replace: '  return {byUser, 2}',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/auth/fleet-throttle.js',
    what: 'what was counted while the store was down is forgotten when it is back',
    find: '    this.onUp = () => this.merge()\n',
    replace: '    this.onUp = () => { this.local = new LoginThrottle({ ...this.settings, onLock: this.onLock }) }\n',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/store/shared-blocklist.js',
    what: 'the fleet\'s blocklist read every 5 s rather than every 500 ms',
    find: 'const POLL_MS = 500',
    replace: 'const POLL_MS = 5000',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/store/shared-blocklist.js',
    what: 'a store that came back empty is taken for the fleet\'s word (the list is lost everywhere)',
    find: '      if (this.lost(version, generation)) {\n',
    replace: '      if (false) {\n',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/store/shared-blocklist.js',
    what: 'an unblock never reaches the store',
    find: '      else multi.srem(SET_KEY, entry)\n',
    replace: '',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/primary/coordinator.js',
    what: 'rate limits stay per instance with a store configured',
    find: '    this.rateBuckets.share((apply) => new FleetBuckets(store, apply))\n',
    replace: '',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/traffic/shared-buckets.js',
    what: 'the fleet\'s TAT read but never applied to this instance\'s buckets',
    find: '    if (tat > entry.tat) entry.tat = tat\n',
    replace: '',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/store/fleet-view.js',
    what: 'the fleet view keeps only the instances seen before this one started',
    find: "      const seen = await client.zrangebyscore(MEMBERS_KEY, now - GONE_MS, '+inf', 'WITHSCORES')",
    replace: "      const seen = await client.zrangebyscore(MEMBERS_KEY, now - GONE_MS, this.started, 'WITHSCORES')",
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/store/fleet-store.js',
    what: 'commands to a store that does not answer wait for it (no command timeout)',
    find: '    commandTimeout: settings.commandTimeout,\n',
    replace: '',
    tests: [STORE]
  },
  {
    area: 'fleet',
    file: 'lib/worker/runtime.js',
    what: 'a worker keeps its own ticket keys when the fleet\'s come',
    find: "    if (main !== null && typeof main.setTicketKeys === 'function') main.setTicketKeys(buffer)\n",
    replace: '',
    tests: [TICKETS]
  },
  {
    area: 'fleet',
    file: 'lib/tls/fleet-ticket-keys.js',
    what: 'every instance makes its own keys for the period (SET without NX)',
    find: "'PX', KEYS_TTL_MS, 'NX')",
    replace: "'PX', KEYS_TTL_MS)",
    tests: [TICKETS]
  },
  {
    area: 'fleet',
    file: 'lib/store/fleet-store.js',
    what: 'the store\'s primary taken from the URL, not asked of Sentinel',
    find: '  if (settings.sentinels.length !== 0) {\n    options.sentinels',
    replace: '  if (false) {\n    options.sentinels',
    tests: [SENTINEL]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-lock.js',
    what: 'the ACME order lock taken without NX: every instance gets it',
    find: "'PX', this.ttl, 'NX')",
    replace: "'PX', this.ttl)",
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-lock.js',
    what: 'the ACME order lock refreshed without checking that it is still ours',
    find: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end",
    replace: "return redis.call('PEXPIRE', KEYS[1], ARGV[2])",
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-lock.js',
    what: 'the ACME order lock released without checking that it is still ours',
    find: "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end",
    replace: "return redis.call('DEL', KEYS[1])",
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-storage.js',
    what: 'a certificate\'s private key stored unencrypted although a store key file is given',
    find: 'JSON.stringify({ cert, key: this.sealer.seal(key, this.certificateKey(name)) })',
    replace: 'JSON.stringify({ cert, key })',
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/store/sealing.js',
    what: 'a key stored unencrypted is used although a store key file is given (a planted key)',
    find: '      if (this.key === null) return value\n      throw new Error(',
    replace: '      return value\n      throw new Error(',
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-storage.js',
    what: 'an instance without the key file writes a plain key over the fleet\'s encrypted one',
    find: '    if (this.sealer.key !== null) {\n      await this.store.client.set(this.certificateKey(name), value)',
    replace: '    if (true) {\n      await this.store.client.set(this.certificateKey(name), value)',
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/tls/fleet-ticket-keys.js',
    what: 'the fleet\'s TLS ticket keys stored unencrypted although a store key file is given',
    find: "sealer.seal(crypto.randomBytes(48).toString('base64'), key)",
    replace: "crypto.randomBytes(48).toString('base64')",
    tests: [TICKETS]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-storage.js',
    what: 'the ACME account key stored unencrypted although a store key file is given',
    find: 'const sealed = this.sealer.seal(own.pem, this.accountName)',
    replace: 'const sealed = own.pem',
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/acme/manager.js',
    what: 'ACME keeps to its own directory with a fleet store (each instance orders)',
    find: 'return store === null ? disk : new StoreStorage',
    replace: 'return store !== undefined ? disk : new StoreStorage',
    tests: [ACME]
  },
  {
    area: 'fleet',
    file: 'lib/acme/store-storage.js',
    what: 'an http-01 answer kept by the instance that ordered, not put in the store',
    find: "    else await client.set('acme:challenge:' + id, answer, 'PX', CHALLENGE_TTL_MS)\n",
    replace: '',
    tests: [ACME]
  }
]
