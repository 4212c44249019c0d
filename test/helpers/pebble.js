'use strict'

const { spawn } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { removeDir } = require('./server')
const { GO_TOOLS, goModuleDir, which, freePorts } = require('./tools')

// The module whose test/ directory holds Pebble's TLS certificate and CA.
const PEBBLE_MODULE = GO_TOOLS.pebble.replace('/cmd/pebble@', '@')
const START_TIMEOUT_MS = 10000

/**
 * Pebble, Let's Encrypt's ACME test server, and pebble-challtestsrv as its
 * DNS server (every name is 127.0.0.1), on loopback ports of their own.
 * Pebble's validation authority checks http-01 on `httpPort` and
 * tls-alpn-01 on `tlsPort`: the ports svr listens on in the test.
 * Both processes are stopped after the test.
 * @param {object} t node:test context
 * @param {{httpPort?: number, tlsPort?: number, validity?: number, blocked?: string[], eab?: Object<string, string>, profiles?: Object<string, number>}} [opts]
 *   validity: seconds a certificate is valid; blocked: names Pebble refuses;
 *   eab: key id -> base64url HMAC key, when accounts need External Account Binding;
 *   profiles: name -> seconds a certificate of that ACME profile is valid,
 *   besides "default" (an order that names none gets one of them at random);
 *   dnsServer: "ip:port" of a DNS server Pebble asks instead of its own
 *   (an authoritative one, for dns-01)
 * @returns {Promise<Pebble>}
 */
async function startPebble (t, { httpPort = 5002, tlsPort = 5001, validity = 3600, blocked = [], eab = null, profiles = {}, dnsServer = null } = {}) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-pebble-'))
  t.after(() => removeDir(dir))
  const testData = path.join(goModuleDir(PEBBLE_MODULE), 'test')
  const [acme, management, dnsPort, dnsManagement] = await freePorts(4)
  const ports = { acme, management, dns: dnsPort, dnsManagement }
  const config = {
    pebble: {
      listenAddress: '127.0.0.1:' + ports.acme,
      managementListenAddress: '127.0.0.1:' + ports.management,
      certificate: path.join(testData, 'certs', 'localhost', 'cert.pem'),
      privateKey: path.join(testData, 'certs', 'localhost', 'key.pem'),
      httpPort,
      tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: eab !== null,
      externalAccountMACKeys: eab === null ? {} : eab,
      domainBlocklist: blocked,
      retryAfter: { authz: 1, order: 1 },
      keyAlgorithm: 'ecdsa',
      profiles: Object.fromEntries([['default', validity], ...Object.entries(profiles)]
        .map(([name, seconds]) => [name, { description: 'svr tests: ' + name, validityPeriod: seconds }]))
    }
  }
  const configFile = path.join(dir, 'pebble-config.json')
  await fs.writeFile(configFile, JSON.stringify(config))
  const pebble = new Pebble(configFile, ports, path.join(testData, 'certs', 'pebble.minica.pem'), dnsServer)
  t.after(() => pebble.stop())
  if (dnsServer !== null) {
    await pebble.start()
    return pebble
  }
  const dns = new Child(which('pebble-challtestsrv'), [
    '-defaultIPv4', '127.0.0.1', '-defaultIPv6', '',
    '-dnsserver', '127.0.0.1:' + ports.dns, '-management', '127.0.0.1:' + ports.dnsManagement,
    '-http01', '', '-https01', '', '-tlsalpn01', '', '-doh', ''
  ], {})
  pebble.dns = dns
  await dns.waitFor(/Starting management server/)
  await pebble.start()
  return pebble
}

/**
 * One spawned program and everything it printed.
 */
class Child {
  constructor (command, args, env) {
    this.output = ''
    this.process = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    this.exited = new Promise((resolve) => this.process.once('exit', resolve))
    const collect = (chunk) => { this.output += chunk }
    this.process.stdout.on('data', collect)
    this.process.stderr.on('data', collect)
  }

  async waitFor (pattern) {
    const deadline = Date.now() + START_TIMEOUT_MS
    while (!pattern.test(this.output)) {
      if (this.process.exitCode !== null || Date.now() > deadline) throw new Error('did not start: ' + this.output)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  async stop () {
    if (this.process.exitCode === null && this.process.signalCode === null) this.process.kill('SIGTERM')
    await this.exited
  }
}

class Pebble {
  constructor (configFile, ports, caBundle, dnsServer) {
    this.configFile = configFile
    this.ports = ports
    this.dnsServer = dnsServer || '127.0.0.1:' + ports.dns
    // The CA of Pebble's own HTTPS certificate (the `acme.caBundle` of svr).
    this.caBundle = caBundle
    this.directoryUrl = 'https://127.0.0.1:' + ports.acme + '/dir'
    this.dns = null
    this.server = null
    // What earlier runs printed, when Pebble was stopped and started again.
    this.previousOutput = ''
  }

  async start () {
    this.server = new Child(which('pebble'), ['-config', this.configFile, '-dnsserver', this.dnsServer], {
      // No random sleeps before validating, and no nonces refused at random.
      PEBBLE_VA_NOSLEEP: '1',
      PEBBLE_WFE_NONCEREJECT: '0'
    })
    await this.server.waitFor(/ACME directory available at/)
  }

  /**
   * Stop Pebble itself (the CA becomes unreachable); the DNS server stays.
   */
  async stopCa () {
    this.previousOutput += this.server.output
    await this.server.stop()
  }

  async stop () {
    if (this.server !== null) await this.server.stop()
    if (this.dns !== null) await this.dns.stop()
  }

  /**
   * @returns {number} new orders Pebble has received (in every run)
   */
  orders () {
    return (this.previousOutput + this.server.output).split('POST /order-plz ').length - 1
  }
}

/**
 * The acme settings of svr for this Pebble.
 * @param {Pebble} pebble
 * @param {object} [more] merged over them
 * @returns {object}
 */
function acmeSettings (pebble, more = {}) {
  return {
    enabled: true,
    agreeToTerms: true,
    email: 'admin@svr-test.example',
    directoryUrl: pebble.directoryUrl,
    caBundle: pebble.caBundle,
    retryDelay: 1000,
    ...more
  }
}

module.exports = { startPebble, acmeSettings, PEBBLE_MODULE }
