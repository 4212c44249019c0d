'use strict'

// Mutations of the area 'supervisor' (see scripts/mutations.js for the fields).

const SAFETY = ['test/cluster/reload-safety.test.js']

module.exports = [
  // Rolling reload
  {
    area: 'supervisor',
    file: 'lib/primary/worker-slots.js',
    what: 'a worker that crashes while a reload rolls is replaced with the old configuration',
    find: 'slot.worker = this.fork(slot, slot.options || this.options)',
    replace: 'slot.worker = this.fork(slot, this.options)',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/rolling-reload.js',
    what: 'a slot moved to the new configuration does not remember it, so a crash replacement brings the old one back',
    find: '    slot.options = options\n',
    replace: '\n',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/rolling-reload.js',
    what: 'the warm-up of a reload waits the old configuration\'s healthReadyDelay',
    find: 'await warmUp(started, options.config.healthReadyDelay)',
    replace: 'await warmUp(started, this.options.config.healthReadyDelay)',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/worker-slots.js',
    what: 'a new worker that dies during its warm-up still takes the slot over, and the old one retires: the slot is left empty',
    find: '    worker.once(\'exit\', onExit)\n',
    replace: '\n',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/rolling-reload.js',
    what: '"reload applied" is logged while an old worker that has not yet read its shutdown still accepts',
    find: '    await Promise.all(retiring)\n',
    replace: '\n',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/worker-slots.js',
    what: 'a retiring worker counts as no longer accepting before its sockets closed',
    find: '  if (record.openPorts.size === 0) return Promise.resolve()\n',
    replace: '  return Promise.resolve()\n',
    tests: SAFETY
  },
  // Listening sockets
  {
    area: 'supervisor',
    file: 'lib/primary/listen-sockets.js',
    what: 'an address no configuration names any more is forgotten without closing its socket',
    find: 'if (!used.has(key)) this.closeEntry(key)',
    replace: 'if (!used.has(key)) this.entries.delete(key)',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/rolling-reload.js',
    what: 'a reload that succeeds keeps the sockets of the addresses it dropped',
    find: '    this.sockets.release(this.configsInUse())\n    await',
    replace: '    await',
    tests: SAFETY
  },
  // Crash back-off
  {
    area: 'supervisor',
    file: 'lib/primary/slots.js',
    what: 'the back-off begins with the first early exit, which is no loop yet',
    find: 'if (streak <= 1) return 0',
    replace: 'if (streak < 1) return 0',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/slots.js',
    what: 'an exit before the worker was ready counts as one after serving: no back-off for an application that cannot start',
    find: '  if (!record.ready) return \'boot\'\n',
    replace: '\n',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/worker-slots.js',
    what: 'a worker that served past crashLoopWindow still counts towards the crash loop',
    find: 'slot.streak = reason === \'served\' ? 0 : slot.streak + 1',
    replace: 'slot.streak = slot.streak + 1',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/worker-slots.js',
    what: 'with every slot empty, a worker that never got ready is restarted at once: a crash loop burns the CPU',
    find: 'if (delay !== 0 && record.ready && this.slots.every(',
    replace: 'if (delay !== 0 && this.slots.every(',
    tests: SAFETY
  },
  {
    area: 'supervisor',
    file: 'lib/primary/worker-slots.js',
    what: 'the crash loop is reported one exit late',
    find: 'if (slot.streak >= CRASH_LOOP_STREAK)',
    replace: 'if (slot.streak > CRASH_LOOP_STREAK)',
    tests: SAFETY
  }
]
