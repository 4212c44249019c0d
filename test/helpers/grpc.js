'use strict'

const fs = require('node:fs')
const grpc = require('@grpc/grpc-js')

// Messages are JSON: no .proto file, no code generation.
const json = {
  serialize: (value) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes) => JSON.parse(bytes.toString())
}

/**
 * A method of a service whose messages are JSON.
 * @param {string} path "/package.Service/Method"
 * @param {boolean} requestStream
 * @param {boolean} responseStream
 * @returns {object} for makeGenericClientConstructor and addService
 */
function jsonMethod (path, requestStream, responseStream) {
  return {
    path,
    requestStream,
    responseStream,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize
  }
}

/**
 * The test service: Unary (one message each way), List (one in, a stream
 * out), Chat (streams both ways).
 */
const ECHO_SERVICE = {
  Unary: jsonMethod('/svr.test.Echo/Unary', false, false),
  List: jsonMethod('/svr.test.Echo/List', false, true),
  Chat: jsonMethod('/svr.test.Echo/Chat', true, true)
}

const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo')

/**
 * A gRPC server of ECHO_SERVICE on loopback, in the test process, shut down
 * after the test.
 * @param {object} t node:test context
 * @param {object} handlers by method name, as grpc-js's addService takes them
 * @param {{cert: string, key: string}} [tls] files from makeCertificate: TLS instead of cleartext (h2c)
 * @returns {Promise<{server: grpc.Server, port: number}>}
 */
function startGrpcServer (t, handlers, tls) {
  const server = new grpc.Server()
  server.addService(ECHO_SERVICE, handlers)
  const credentials = tls === undefined
    ? grpc.ServerCredentials.createInsecure()
    : grpc.ServerCredentials.createSsl(null, [{ cert_chain: fs.readFileSync(tls.cert), private_key: fs.readFileSync(tls.key) }], false)
  return new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', credentials, (err, port) => {
      if (err) {
        reject(err)
        return
      }
      t.after(() => server.forceShutdown())
      resolve({ server, port })
    })
  })
}

/**
 * A client for svr's TLS port, trusting svr's test certificate (made for
 * "localhost"), closed after the test.
 * @param {object} t node:test context
 * @param {number} port svr's
 * @param {string} certFile svr's certificate
 * @param {{authority?: string, Client?: Function}} [opts] the :authority
 *   (svr's Host) of the calls, "localhost" by default; a client class of
 *   another service than ECHO_SERVICE
 * @returns {object} an EchoClient, or of `Client`
 */
function echoClient (t, port, certFile, { authority = 'localhost', Client = EchoClient } = {}) {
  const client = new Client('127.0.0.1:' + port, grpc.credentials.createSsl(fs.readFileSync(certFile)), {
    'grpc.ssl_target_name_override': 'localhost',
    'grpc.default_authority': authority
  })
  t.after(() => client.close())
  return client
}

// How long a test waits for a call to end, whatever its deadline: a call
// that never ends is a failure, not a hang.
const CALL_WAIT_MS = 10000

/**
 * A unary call as a promise; rejected (and the call cancelled) when it has
 * not ended within CALL_WAIT_MS.
 * @param {object} client
 * @param {object} message
 * @param {object} [options] call options (deadline…)
 * @param {grpc.Metadata} [metadata]
 * @returns {Promise<{value: object|null, error: Error|null}>}
 */
function unary (client, message, options = {}, metadata = new grpc.Metadata()) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      call.cancel()
      reject(new Error('the call ' + JSON.stringify(message) + ' did not end within ' + CALL_WAIT_MS + ' ms'))
    }, CALL_WAIT_MS)
    const call = client.Unary(message, metadata, options, (error, value) => {
      clearTimeout(timer)
      resolve({ value: value ?? null, error })
    })
  })
}

module.exports = { grpc, jsonMethod, ECHO_SERVICE, EchoClient, startGrpcServer, echoClient, unary }
