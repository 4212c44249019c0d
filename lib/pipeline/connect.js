'use strict'

const { compileAddressList } = require('../access/address-list')
const { normalizeAddress } = require('../hosts/vhost')

/**
 * CONNECT requests: refused (501) unless a mod handles them; the block list
 * applies to them as to every request (SVR.JS skipped it here).
 * @param {object} options runtime options
 * @param {object} shared per-worker services (links, log, serverString)
 * @returns {(req, socket, head) => void}
 */
function createConnectHandler (options, shared) {
  const links = shared.links.filter((link) => typeof link.connect === 'function')
  const isBlocked = compileAddressList(options.config.blacklist)
  const signature = shared.serverString

  return function handleConnect (req, socket, head) {
    if (isBlocked !== null && isBlocked(normalizeAddress(socket.remoteAddress))) {
      answerRaw(socket, '403 Forbidden', signature)
      return
    }
    runLink(0, req, socket, head)
  }

  function runLink (index, req, socket, head) {
    if (index === links.length) {
      answerRaw(socket, '501 Not Implemented', signature)
      return
    }
    const link = links[index]
    let called = false
    const next = () => {
      if (called) return
      called = true
      runLink(index + 1, req, socket, head)
    }
    try {
      const result = link.connect(req, socket, head, next)
      if (result && typeof result.then === 'function') result.then(undefined, (err) => fail(err, link, req, socket))
    } catch (err) {
      fail(err, link, req, socket)
    }
  }

  function fail (err, link, req, socket) {
    shared.log.error(link.name + ' failed on CONNECT ' + req.url + ':', err)
    answerRaw(socket, '500 Internal Server Error', signature)
  }
}

function answerRaw (socket, status, signature) {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  socket.end('HTTP/1.1 ' + status + '\r\nServer: ' + signature + '\r\nContent-Length: 0\r\nConnection: close\r\n\r\n')
}

module.exports = { createConnectHandler }
