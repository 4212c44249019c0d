'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { workerExecArgv, FRAME_FLAG } = require('../../lib/primary/worker-flags')

const WITH_FLAG = new Set([FRAME_FLAG, '--max-old-space-size'])
const WITHOUT_FLAG = new Set(['--max-old-space-size'])

describe('workerExecArgv', () => {
  it('should add the async context frame flag on Node 22', () => {
    assert.deepEqual(workerExecArgv({ execArgv: [], env: {}, version: 'v22.23.3', allowed: WITH_FLAG }), [FRAME_FLAG])
  })

  it('should keep the primary options before the flag', () => {
    assert.deepEqual(workerExecArgv({ execArgv: ['--max-old-space-size=512'], env: {}, version: 'v22.7.0', allowed: WITH_FLAG }),
      ['--max-old-space-size=512', FRAME_FLAG])
  })

  it('should add nothing on Node 24, where frames are the default', () => {
    assert.deepEqual(workerExecArgv({ execArgv: [], env: {}, version: 'v24.21.0', allowed: WITH_FLAG }), [])
  })

  it('should add nothing on a Node that does not know the flag (20, or 22 before 22.7)', () => {
    assert.deepEqual(workerExecArgv({ execArgv: ['--inspect'], env: {}, version: 'v20.20.2', allowed: WITHOUT_FLAG }), ['--inspect'])
  })

  it('should keep an operator\'s choice in execArgv or NODE_OPTIONS', () => {
    assert.deepEqual(workerExecArgv({ execArgv: ['--no-experimental-async-context-frame'], env: {}, version: 'v22.23.3', allowed: WITH_FLAG }),
      ['--no-experimental-async-context-frame'])
    assert.deepEqual(workerExecArgv({ execArgv: [], env: { NODE_OPTIONS: '--trace-warnings --no-experimental-async-context-frame' }, version: 'v22.23.3', allowed: WITH_FLAG }), [])
  })
})
