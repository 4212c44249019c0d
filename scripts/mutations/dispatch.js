'use strict'

// Mutations of the area 'dispatch': the primary handing connections to the
// workers (see scripts/mutations.js for the fields).

const UNIT = 'test/unit/connection-dispatch.test.js'
const SPREAD = 'test/cluster/connection-spread.test.js'
const SUPERVISION = 'test/cluster/supervision.test.js'
const SESSIONS = 'test/unit/tls-session-cache.test.js'
const RESUMPTION = 'test/tls/resumption.test.js'

module.exports = [
  {
    area: 'dispatch',
    file: 'lib/primary/connection-dispatch.js',
    what: 'each connection goes to the next in turn with room, however far behind it is (a blocked worker gets its full in-flight share)',
    find: '      if (intake.inFlight.size > most || stalled(intake, now)) continue\n',
    replace: '      if (stalled(intake, now)) continue\n',
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
    tests: [SPREAD]
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
  }
]
