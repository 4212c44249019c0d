'use strict'

// dns-01 against Pebble and a real authoritative DNS server (Knot) on
// loopback: a wildcard certificate through RFC 2136 updates signed with
// TSIG (sent by nsupdate), served for every name one label down, its
// records removed after; the exec provider, with a program of the
// operator's; and what a failed record says. Pebble asks Knot alone, as a
// CA asks a zone's name servers. Knot, nsupdate and Pebble are installed by
// .ci/run.

const { describe, it, before } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs/promises')
const path = require('node:path')
const { startSvr, runSvr } = require('../helpers/server')
const { skipWithout, requireTools } = require('../helpers/tools')
const { startKnot } = require('../helpers/knot')
const { TOOLS: ACME_TOOLS, setUp, handshake, until } = require('../helpers/acme')

const TOOLS = [...ACME_TOOLS, 'knotd', 'nsupdate']
const ZONE = 'example.test'
const RECORD = '_acme-challenge.' + ZONE

async function dnsSite (t, knot, acme) {
  return setUp(t, { pebble: { dnsServer: knot.server }, acme })
}

async function storedCertificate (storage, name) {
  return new crypto.X509Certificate(await fs.readFile(path.join(storage, 'certificates', name, 'cert.pem')))
}

// An exec provider that passes each call on to nsupdate, and notes it.
async function execProvider (dir, knot, { act = true } = {}) {
  const command = path.join(dir, 'dns-hook')
  const calls = path.join(dir, 'calls.log')
  await fs.writeFile(command, [
    '#!/bin/sh',
    'echo "$1 $2 $3" >> ' + calls,
    act ? '' : 'exit 0',
    'if [ "$1" = present ]; then op="add $2. 60 IN TXT \\"$3\\""; else op="delete $2. IN TXT \\"$3\\""; fi',
    'printf \'server 127.0.0.1 ' + knot.port + '\\nzone ' + ZONE + '.\\nupdate %s\\nsend\\n\' "$op" | nsupdate -k ' + knot.keyFile,
    ''
  ].join('\n'), { mode: 0o755 })
  return { command, calls }
}

describe('automatic HTTPS through dns-01', { skip: skipWithout(...TOOLS) }, () => {
  before(() => requireTools(null, ...TOOLS))

  it('gets a wildcard certificate through RFC 2136, serves it for the names one label down, and removes the record', async (t) => {
    const knot = await startKnot(t, ZONE)
    const { ports, site, storage } = await dnsSite(t, knot, {
      names: ['*.' + ZONE],
      dns: { provider: 'rfc2136', server: knot.server, tsigKeyFile: knot.keyFile }
    })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: \*\.example\.test: ordering a certificate from \S+ \(dns-01\)/, 20000)
    await svr.waitFor(/acme: \*\.example\.test: certificate issued, valid until/, 30000)
    // '*' is kept as '_' in a folder name.
    const cert = await storedCertificate(storage, '_.' + ZONE)
    assert.equal(cert.subjectAltName, 'DNS:*.' + ZONE)
    for (const name of ['www.' + ZONE, 'shop.' + ZONE]) {
      await until(async () => (await handshake(ports.https, name)).fingerprint === cert.fingerprint256)
    }
    // Not the zone's apex, nor two labels down: the stand-in.
    for (const name of [ZONE, 'a.b.' + ZONE]) assert.notEqual((await handshake(ports.https, name)).fingerprint, cert.fingerprint256)
    assert.deepEqual(await knot.txt(RECORD), [])
    // The record put up, then taken down: two updates, which Knot takes only signed with the key.
    assert.equal(knot.output().match(/DDNS, finished/g).length, 2)
  })

  it('puts up and removes the record with the exec provider, waiting for it at acme.dns.resolvers', async (t) => {
    const knot = await startKnot(t, ZONE)
    const name = 'www.' + ZONE
    const { ports, site, storage } = await dnsSite(t, knot, { names: [name], challenge: 'dns-01' })
    const hook = await execProvider(site.dir, knot)
    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await site.writeConfig({ ...config, acme: { ...config.acme, dns: { provider: 'exec', command: 'dns-hook', resolvers: [knot.server] } } })
    const svr = await startSvr(t, site.configFile)
    await svr.waitFor(/acme: www\.example\.test: certificate issued, valid until/, 30000)
    const cert = await storedCertificate(storage, name)
    await until(async () => (await handshake(ports.https, name)).fingerprint === cert.fingerprint256)
    const calls = (await fs.readFile(hook.calls, 'utf8')).trim().split('\n')
    assert.equal(calls.length, 2, calls.join('\n'))
    const [present, cleanup] = calls.map((line) => line.split(' '))
    assert.deepEqual([present[0], present[1], cleanup[0], cleanup[1]], ['present', '_acme-challenge.' + name, 'cleanup', '_acme-challenge.' + name])
    assert.match(present[2], /^[A-Za-z0-9_-]{43}$/)
    assert.equal(cleanup[2], present[2])
    assert.deepEqual(await knot.txt('_acme-challenge.' + name), [])
  })

  it('fails the attempt, saying where, when the record never appears or the provider fails', async (t) => {
    const knot = await startKnot(t, ZONE)
    const name = 'www.' + ZONE
    const { site } = await dnsSite(t, knot, { names: [name], challenge: 'dns-01', retryDelay: 60000 })
    await execProvider(site.dir, knot, { act: false })
    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await site.writeConfig({ ...config, acme: { ...config.acme, dns: { provider: 'exec', command: 'dns-hook', resolvers: [knot.server], propagationTimeout: 3000 } } })
    const svr = await startSvr(t, site.configFile)
    const line = await svr.waitFor(/acme: www\.example\.test: order failed \(attempt 1\): ([^\n]*); retrying in 60 s/, 30000)
    assert.equal(line[1], 'the dns-01 record _acme-challenge.www.example.test did not appear within 3 s at ' + knot.server)

    const refusing = await dnsSite(t, knot, { names: [name], challenge: 'dns-01', retryDelay: 60000, dns: { provider: 'rfc2136', server: knot.server } })
    const unsigned = await startSvr(t, refusing.site.configFile)
    const refused = await unsigned.waitFor(/acme: www\.example\.test: order failed \(attempt 1\): ([^\n]*); retrying in 60 s/, 30000)
    assert.equal(refused[1], 'nsupdate exited with 2: update failed: NOTAUTH (the DNS server refused the update: check that ' +
      'acme.dns.tsigKeyFile holds a key the zone allows updates with, and acme.dns.server and acme.dns.zone)')
    // Nothing was put up, so nothing is taken down.
    assert.doesNotMatch(unsigned.output, /cannot remove the dns-01 record/)
  })

  it('refuses, with --check-config, a wildcard without acme.dns, a provider without its settings and a TSIG file without a key', async (t) => {
    const knot = await startKnot(t, ZONE)
    const { site } = await dnsSite(t, knot, { names: ['*.' + ZONE] })
    const wildcard = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(wildcard.code, 1)
    assert.equal(wildcard.stderr, site.configFile + ': /acme/names/0: "*.example.test" is a wildcard, which a CA validates only over DNS (dns-01): set acme.dns\n')

    const config = JSON.parse(await fs.readFile(site.configFile, 'utf8'))
    await site.writeConfig({ ...config, acme: { ...config.acme, challenge: 'http-01', dns: { provider: 'rfc2136', resolvers: ['ns1.example.test'] } } })
    const incomplete = await runSvr(['--config', site.configFile, '--check-config'])
    assert.deepEqual(incomplete.stderr.trimEnd().split('\n'), [
      site.configFile + ': /acme/names/0: "*.example.test" is a wildcard, which only dns-01 validates: add "dns-01" to acme.challenge or use null',
      site.configFile + ': /acme/dns/server: "rfc2136" needs the IP address of the DNS server that takes the updates',
      site.configFile + ': /acme/dns/resolvers/0: must be an IP address, with ":port" when not 53'
    ])

    await fs.writeFile(path.join(site.dir, 'tsig.key'), 'not a key\n')
    await site.writeConfig({ ...config, acme: { ...config.acme, dns: { provider: 'rfc2136', server: knot.server, tsigKeyFile: 'tsig.key' } } })
    const badKey = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(badKey.stderr, site.configFile + ': /acme/dns/tsigKeyFile: ' + path.join(site.dir, 'tsig.key') +
      ' holds no key in the format tsig-keygen writes (key "name" { algorithm hmac-sha256; secret "..."; };)\n')

    await site.writeConfig({ ...config, acme: { ...config.acme, dns: { provider: 'exec', command: 'missing-hook' } } })
    const noCommand = await runSvr(['--config', site.configFile, '--check-config'])
    assert.equal(noCommand.stderr, site.configFile + ': /acme/dns/command: ' + path.join(site.dir, 'missing-hook') + ' is not a program svr can run (ENOENT)\n')
  })
})
