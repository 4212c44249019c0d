'use strict'

// RFC 8555 (http-01): the CA fetches http://<name>/.well-known/acme-challenge/<token>.
const PREFIX = '/.well-known/acme-challenge/'
// A token is base64url; anything else is no token of ours.
const TOKEN = /^[A-Za-z0-9_-]{1,256}$/
// The coordinator answers from memory; a CA retries a failed fetch.
const TOKEN_TIMEOUT_MS = 2000

/**
 * The http-01 challenges of automatic HTTPS, answered before every other
 * stage: a site that forces HTTPS, asks for a password on "/" or forbids
 * dotfiles must still prove that it holds its name. The key authorization
 * comes from the coordinator, which holds the open challenges of the
 * certificate manager, so every worker answers every token.
 * @param {object} options runtime options
 * @param {{runtime: import('../runtime').Runtime}} shared
 * @returns {((req, res) => boolean | Promise<boolean>) | null} null unless acme uses http-01
 */
function createAcmeChallengeStage (options, shared) {
  const { acme } = options.config
  if (!acme.enabled || !acme.challenges.includes('http-01')) return null
  const { coordinator } = shared.runtime
  return function answerAcmeChallenge (req, res) {
    if (!req.url.startsWith(PREFIX)) return false
    const token = req.url.slice(PREFIX.length)
    if (!TOKEN.test(token)) return send(req, res, 404, 'no such challenge\n')
    return coordinator.request('acme-token', { token }, { timeout: TOKEN_TIMEOUT_MS }).then(
      (keyAuthorization) => keyAuthorization === null
        ? send(req, res, 404, 'no such challenge\n')
        : send(req, res, 200, keyAuthorization),
      () => send(req, res, 503, 'challenge not available\n'))
  }
}

function send (req, res, status, body) {
  res.statusCode = status
  res.setHeader('Content-Type', 'text/plain; charset=utf-8')
  res.setHeader('Cache-Control', 'no-store')
  res.end(req.method === 'HEAD' ? undefined : body)
  return true
}

module.exports = { createAcmeChallengeStage }
