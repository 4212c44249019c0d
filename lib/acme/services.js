'use strict'

/**
 * What the certificate manager answers workers through the coordinator
 * (lib/primary/coordinator.js): the key authorization of an http-01 token,
 * a name's certificate (or open tls-alpn-01 challenge) for a worker that
 * has none yet, and the summary for the status page.
 * @param {import('./manager').CertificateManager} manager
 * @returns {Object<string, Function>}
 */
function certificateServices (manager) {
  return {
    'acme-token': (msg) => manager.challenges.token(String(msg.token)),
    'acme-lookup': async (msg) => {
      await manager.loaded
      const certificate = manager.certificates.get(msg.name)
      return {
        cert: certificate === undefined ? null : certificate.cert,
        key: certificate === undefined ? null : certificate.key,
        alpn: manager.acme === null || !manager.acme.challenges.includes('tls-alpn-01') ? null : await manager.challenges.alpnCertificate(msg.name)
      }
    },
    // A handshake for a name no configuration lists (acme.onDemand): its certificate, or null to refuse it.
    'acme-on-demand': async (msg) => {
      await manager.loaded
      const certificate = manager.onDemand === null ? null : await manager.onDemand.certificate(String(msg.name))
      return certificate === null ? { cert: null, key: null } : { cert: certificate.cert, key: certificate.key }
    },
    'acme-summary': () => manager.summary()
  }
}

module.exports = { certificateServices }
