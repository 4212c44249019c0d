'use strict'

// The deployment recipes in docs/deploy.md are the files in docs/examples/,
// checked here by the tools that read them, so that a copied example works.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const fs = require('node:fs/promises')
const os = require('node:os')
const path = require('node:path')
const { loadConfig } = require('../../lib/primary/options')
const { removeDir } = require('../helpers/server')
const { requireTools } = require('../helpers/tools')

const ROOT = path.join(__dirname, '..', '..')
const EXAMPLES = path.join(ROOT, 'docs', 'examples')
const example = (name) => path.join(EXAMPLES, name)

function run (file, args) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 30000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, output: stdout + stderr })
    })
  })
}

async function tempDir (t) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'svr-deploy-'))
  t.after(() => removeDir(dir))
  return dir
}

/** The config.json embedded in the ConfigMap of kubernetes.yaml. */
function configMapJson (yaml) {
  const block = yaml.match(/^ {2}config\.json: \|\n((?: {4}.*\n)+)/m)
  assert.ok(block, 'kubernetes.yaml has a ConfigMap with config.json')
  return block[1].replace(/^ {4}/gm, '')
}

describe('docs/deploy.md', () => {
  it('quotes every file of docs/examples verbatim', async () => {
    const doc = await fs.readFile(path.join(ROOT, 'docs', 'deploy.md'), 'utf8')
    const files = await fs.readdir(EXAMPLES)
    assert.ok(files.length >= 5)
    for (const name of files) {
      const text = await fs.readFile(example(name), 'utf8')
      assert.ok(doc.includes('\n' + text + '```'), name + ' differs from its copy in docs/deploy.md')
    }
  })

  it('the nginx example passes nginx -t', async (t) => {
    if (!requireTools(t, 'nginx')) return
    const dir = await tempDir(t)
    // The example is a conf.d file: include it in a minimal main config
    // whose logs and temp paths are in the temp directory.
    const main = [
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/error.log;`,
      'events {}',
      'http {',
      `  access_log ${dir}/access.log;`,
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`),
      `  include ${example('nginx-svr.conf')};`,
      '}',
      ''
    ].join('\n')
    await fs.writeFile(path.join(dir, 'nginx.conf'), main)
    const result = await run('nginx', ['-t', '-p', dir, '-e', path.join(dir, 'error.log'), '-c', path.join(dir, 'nginx.conf')])
    assert.equal(result.code, 0, result.output)
    assert.match(result.output, /syntax is ok/)
  })

  it('the HAProxy example passes haproxy -c', async (t) => {
    if (!requireTools(t, 'haproxy')) return
    const result = await run('haproxy', ['-c', '-f', example('haproxy.cfg')])
    assert.equal(result.code, 0, result.output)
  })

  it('the svr configs of the recipes load, with the health path the probes use', async (t) => {
    const dir = await tempDir(t)
    const balanced = await loadConfig(example('config.json'), { installDir: ROOT })
    assert.equal(balanced.healthPath, '/healthz')
    assert.deepEqual(balanced.trustedProxies, ['10.0.0.2', '10.0.0.3'])
    const haproxy = await fs.readFile(example('haproxy.cfg'), 'utf8')
    assert.match(haproxy, new RegExp('option httpchk GET ' + balanced.healthPath + '\\n'))

    const yaml = await fs.readFile(example('kubernetes.yaml'), 'utf8')
    const file = path.join(dir, 'config.json')
    await fs.writeFile(file, configMapJson(yaml))
    const config = await loadConfig(file, { installDir: ROOT })
    const probePaths = [...yaml.matchAll(/^ +path: (\S+)$/gm)].map((match) => match[1])
    assert.equal(probePaths.length, 3)
    for (const probe of probePaths) assert.equal(probe, config.healthPath)
    const grace = Number(yaml.match(/terminationGracePeriodSeconds: (\d+)/)[1])
    const preStop = Number(yaml.match(/command: \["sleep", "(\d+)"\]/)[1])
    assert.ok(grace * 1000 > preStop * 1000 + config.shutdownDelay + config.shutdownTimeout,
      'terminationGracePeriodSeconds covers preStop, shutdownDelay and shutdownTimeout')
  })

  it('the Containerfile copies files that exist and runs as a non-root user', async () => {
    const text = await fs.readFile(example('Containerfile'), 'utf8')
    const sources = [...text.matchAll(/^COPY (.+) \S+$/gm)].flatMap((match) => match[1].split(' '))
    assert.ok(sources.length >= 5)
    for (const source of sources) await fs.access(path.join(ROOT, source))
    assert.match(text, /^USER (?!root)\S+$/m)
    assert.match(text, /--omit=dev/)
  })
})
