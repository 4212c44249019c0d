'use strict'

// Mutations of the area 'dispatch': the primary handing connections to the
// workers (see scripts/mutations.js for the fields).

const UNIT = 'test/unit/connection-dispatch.test.js'
const SPREAD = 'test/cluster/connection-spread.test.js'
const SUPERVISION = 'test/cluster/supervision.test.js'
const SESSIONS = 'test/unit/tls-session-cache.test.js'
const RESUMPTION = 'test/tls/resumption.test.js'
const PASSING = 'test/unit/pass-policy.test.js'
const INTERNALS = 'test/unit/node-internals.test.js'
const PORT = 'test/unit/shared-port.test.js'
const ORPHAN = 'test/unit/worker-channel.test.js'

module.exports = [
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'each connection goes to the next in turn with room, however far behind it is (a blocked worker gets its full in-flight share)',
    find: '      if (intake === except || intake.inFlight.size > most || stalled(intake, now)) continue\n',
    replace: '      if (intake === except || stalled(intake, now)) continue\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'each connection goes to the worker with the fewest unacknowledged (a burst goes mostly to whichever answered sooner)',
    find: '    const most = Math.min(fewest + BEHIND, IN_FLIGHT_PER_WORKER - 1)\n',
    replace: '    const most = fewest\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'every connection goes to the first worker that listens',
    find: '      this.turn = (at + 1) % count\n      return intake\n',
    replace: '      return intakes[0]\n',
    tests: [UNIT, SPREAD]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'a connection passed on may go straight back to the worker that passed it',
    find: '    const intake = this.pick(from)\n',
    replace: '    const intake = this.pick(null)\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/worker/shared-port.js',
    what: 'a worker keeps every connection it accepts, however many it holds',
    find: '    if (this.balance.shouldPass() && this.pass(client)) return\n',
    replace: '',
    tests: [SPREAD, INTERNALS]
  },
  {
    area: 'dispatch',
    file: 'lib/worker/shared-port.js',
    what: 'a failed accept goes to Node\'s server, which emits it as an error nobody listens to',
    find: '    if (err !== 0 || client === undefined) return\n    if (this.balance.shouldPass() && this.pass(client)) return\n    this.onconnection(0, client)\n',
    replace: '    if (err !== 0 || client === undefined) return this.onconnection(err, client)\n    if (this.balance.shouldPass() && this.pass(client)) return\n    this.onconnection(0, client)\n',
    tests: [PORT]
  },
  {
    area: 'dispatch',
    file: 'lib/worker/shared-port.js',
    what: 'a connection whose message failed to be written is closed instead of kept',
    find: '      if (err === null || err === undefined || !this.take(client)) client.close()\n',
    replace: '      client.close()\n',
    tests: [PORT]
  },
  {
    area: 'dispatch',
    file: 'lib/worker/worker.js',
    what: 'a worker waits for the channel\'s disconnect alone to see that the primary is gone',
    find: '  state.primaryWatch = setInterval(() => { if (!channel.connected) stop(state, 0) }, PRIMARY_CHECK_MS)\n',
    replace: '  state.primaryWatch = setInterval(() => {}, PRIMARY_CHECK_MS)\n',
    tests: [ORPHAN]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/supervisor.js',
    what: 'what a worker sent before its exit was handled finds no intake (its record is gone)',
    find: '    return this.intakes.get(worker)\n',
    replace: '    return this.records.get(worker)?.intake\n',
    tests: [PORT]
  },
  {
    area: 'dispatch',
    file: 'lib/worker/shared-port.js',
    what: 'a worker closes its copy of a connection it passes on before the message carrying it is written',
    find: "    return this.coordinator.notify('conn-pass', { role: this.role }, client, (err) => {\n",
    replace: "    client.close()\n    return this.coordinator.notify('conn-pass', { role: this.role }, client, (err) => {\n",
    tests: [SPREAD, INTERNALS]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/pass-policy.js',
    what: 'the connection just accepted is left out of the count it is judged by',
    find: '    const mine = open + 1\n',
    replace: '    const mine = open\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/pass-policy.js',
    what: 'a worker passes on one connection more than its slack allows it to keep',
    find: '    if (mine <= even + Math.max(MIN_SLACK, even * SLACK_FRACTION)) return false\n',
    replace: '    if (mine < even + Math.max(MIN_SLACK, even * SLACK_FRACTION)) return false\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/pass-policy.js',
    what: 'connections passed on are not counted as the others\' until the primary says so (a burst is passed on whole)',
    find: '    this.passed++\n    return true\n',
    replace: '    return true\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/pass-policy.js',
    what: 'the passes counted stay counted after the primary has told the others\' load',
    find: '    this.others = others\n    this.peers = peers\n    this.passed = 0\n',
    replace: '    this.others = others\n    this.peers = peers\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'a worker is not told that a connection it passed on came back',
    find: '    if (this.intakes.includes(from)) from.give(this, client, true)\n',
    replace: '    if (this.intakes.includes(from)) from.give(this, client)\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/worker/worker.js',
    what: 'a worker pays no heed to a connection of its own coming back',
    find: '  if (msg.back === true) state.runtime.balance.passedBack()\n',
    replace: '',
    tests: [ORPHAN]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/pass-policy.js',
    what: 'a worker whose passes come back goes on passing',
    find: '    if (this.pausedUntil > -Infinity && this.clock() < this.pausedUntil) return false\n',
    replace: '',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/primary.js',
    what: 'a worker is told its own connections among the others\'',
    find: '      const others = total - open\n',
    replace: '      const others = total\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/worker.js',
    what: 'a worker reports a large move of its open connections only with the regular report',
    find: '    if (moved < 2 || moved < this.reportedOpen / 4) return\n',
    replace: '    return\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/balance/worker.js',
    what: 'a closed connection stays counted as open',
    find: '    this.closed = () => {\n      this.open--\n',
    replace: '    this.closed = () => {\n',
    tests: [PASSING]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'a stalled worker keeps getting connections',
    find: '  return intake.inFlight.size !== 0 && now - intake.oldestAt() > STALL_MS\n',
    replace: '  return false\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/worker-intake.js',
    what: 'the primary closes its descriptor as it hands the connection over, not once the worker took it',
    find: '    this.inFlight.set(id, { dispatch, client, at: performance.now() })\n',
    replace: '    this.inFlight.set(id, { dispatch, client, at: performance.now() })\n    process.nextTick(() => client.close())\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/worker-intake.js',
    what: 'a dead worker\'s unacknowledged connections are dropped instead of handed on',
    find: '    for (const { dispatch, client } of entries) dispatch.hand(client)\n',
    replace: '    for (const { client } of entries) client.close()\n',
    tests: [UNIT, SUPERVISION]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/worker-intake.js',
    what: 'a connection a worker did not take is closed',
    find: '        entry.dispatch.remove(this)\n        entry.dispatch.hand(entry.client)\n',
    replace: '        entry.dispatch.remove(this)\n        entry.client.close()\n',
    tests: [UNIT]
  },
  {
    area: 'dispatch',
    file: 'lib/tls/session-cache.js',
    what: 'every offered session id is fetched from the primary',
    find: '    if (!known.has(session)) {\n',
    replace: '    if (false) {\n',
    tests: [SESSIONS]
  },
  {
    area: 'dispatch',
    file: 'lib/tls/session-cache.js',
    what: 'the workers are not told of a stored session',
    find: "          this.coordinator.broadcast('tls-sessions-known', { sessions: [msg.session] })\n",
    replace: '',
    tests: [SESSIONS, RESUMPTION]
  },
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'a passed-on connection goes back to its worker once the other has a few unacknowledged (the passer counted in the fewest)',
    find: '      if (intakes[i] !== except && size < fewest && !stalled(intakes[i], now)) fewest = size',
    replace: '      if (size < fewest && !stalled(intakes[i], now)) fewest = size',
    tests: [UNIT]
  }
]
