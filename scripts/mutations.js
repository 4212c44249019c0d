'use strict'

// The mutations `npm run test:mutate` applies, one at a time (see
// scripts/mutate.js and docs/testing.md). Each is a realistic mistake in
// code where a mistake is a vulnerability or a failed request: `find` is
// replaced by `replace` (the first and only occurrence in `file`), and
// `tests` must then fail. `area` groups them (`--area NAME` runs one).
// Keep `find` short but unique; when the code changes, the run says which
// entries no longer match. The areas added after the first list have a
// file each in scripts/mutations/.

const SANITIZE = ['test/unit/sanitize-path.test.js', 'test/unit/sanitize-path.property.test.js', 'test/http/url.test.js']
const FORBIDDEN = ['test/unit/forbidden-paths.test.js', 'test/http/access.test.js']
const SYMLINKS = ['test/http/static.test.js', 'test/http/file-caches.test.js']
const AUTH = ['test/unit/auth-throttle.test.js', 'test/unit/auth-login.test.js', 'test/unit/auth-verify.test.js', 'test/http/auth.test.js']
const CLIENT_ADDRESS = ['test/unit/client-address.test.js', 'test/http/client-address.test.js']
const LIFECYCLE = ['test/cluster/lifecycle.test.js']
const SINGLE = ['test/cluster/single-threaded.test.js']

module.exports = [
  // Path sanitizer
  {
    area: 'sanitizer',
    file: 'lib/paths/fs-path.js',
    what: 'the file paths kept by a path looked up in lower case: /A gets the file of /a',
    find: '    let file = this.kept.get(decoded)\n',
    replace: '    let file = this.kept.get(decoded.toLowerCase())\n',
    tests: ['test/unit/fs-path.test.js']
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'the fast path takes "/a/../b" as clean (no check for a dot before a slash)',
    find: 'if (++run > maxRun || prev === 0x2e) return NOT_CLEAN',
    replace: 'if (++run > maxRun) return NOT_CLEAN',
    tests: SANITIZE
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'a path with a segment starting with "." is taken for plain, so the dotfiles check skips it',
    find: '      if (c === 0x2e && prev === 0x2f) plain = false\n',
    replace: '',
    tests: [...SANITIZE, ...FORBIDDEN]
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'a path with an empty segment (allowDoubleSlashes) is taken for plain and joined to the root as it is',
    find: '      if (run === 2) plain = false\n',
    replace: '',
    tests: SANITIZE
  },
  {
    area: 'sanitizer',
    file: 'lib/pipeline/stages/sanitize.js',
    what: 'a target whose raw bytes were fixed keeps the path the context split off it as received',
    find: '    if (url !== ctx.originalUrl) {\n',
    replace: '    if (false) {\n',
    tests: SANITIZE
  },
  {
    area: 'sanitizer',
    file: 'lib/pipeline/stages/forbidden.js',
    what: 'the forbidden check trusts the sanitizer\'s plain path after a rewrite replaced it',
    find: '    const plain = ctx.plainPath !== null && ctx.decodedPath === ctx.plainPath\n',
    replace: '    const plain = ctx.plainPath !== null\n',
    tests: ['test/http/rewrite.test.js']
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: '".." at the root climbs out instead of being dropped',
    find: 'if (stack.length !== 0) stack.pop()',
    replace: 'if (stack.length !== 0) stack.pop(); else stack.push(\'..\')',
    tests: SANITIZE
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'a backslash is an ordinary character, not a separator',
    find: 'else if (c === 0x5c) action = BACKSLASH',
    replace: 'else if (c === 0x5c) action = CHAR',
    tests: SANITIZE
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'trailing dots are kept, so "config.json." dodges the deny list',
    find: 'while (seg.charCodeAt(end - 1) === 0x2e) end--',
    replace: '',
    tests: [...SANITIZE, 'test/http/access.test.js']
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'a decoded %3F or %23 becomes a raw "?" or "#" in the path',
    find: "const UNSAFE = '\"<>^`{|}?#'",
    replace: "const UNSAFE = '\"<>^`{|}'",
    tests: SANITIZE
  },
  {
    area: 'sanitizer',
    file: 'lib/paths/sanitize-path.js',
    what: 'a rewritten path with ".." is not reported as escaping',
    find: 'if (seen !== null) seen.parent = true\n',
    replace: '\n',
    tests: [...SANITIZE, 'test/http/rewrite.test.js']
  },
  // Forbidden paths and dotfiles
  {
    area: 'forbidden',
    file: 'lib/access/forbidden-paths.js',
    what: 'forbidden paths compared case-sensitively (/CONFIG.JSON served)',
    find: '  return p.toLowerCase()\n}',
    replace: '  return p\n}',
    tests: FORBIDDEN
  },
  {
    area: 'forbidden',
    file: 'lib/access/forbidden-paths.js',
    what: 'emacs backups (config.json~) of the configuration not forbidden',
    find: "  (name) => name + '~',\n",
    replace: '',
    tests: FORBIDDEN
  },
  {
    area: 'forbidden',
    file: 'lib/access/forbidden-paths.js',
    what: 'a forbidden directory matched only by its own path, not the files in it',
    find: "let end = p.indexOf('/', 1)",
    replace: 'let end = -1',
    tests: FORBIDDEN
  },
  {
    area: 'forbidden',
    file: 'lib/access/forbidden-paths.js',
    what: 'runs of slashes not collapsed before the comparison (//config.json served)',
    find: 'collapseAllSlashes(decoded)',
    replace: 'decoded',
    tests: FORBIDDEN
  },
  {
    area: 'forbidden',
    file: 'lib/pipeline/stages/forbidden.js',
    what: 'any name that starts with ".well-known" is exempt from the dotfile rule',
    find: 'p.startsWith(WELL_KNOWN + \'/\')',
    replace: 'p.startsWith(WELL_KNOWN)',
    tests: FORBIDDEN
  },
  {
    area: 'forbidden',
    file: 'lib/pipeline/stages/forbidden.js',
    what: 'dotfiles below /.well-known/ are served',
    find: "i = p.indexOf('/.', WELL_KNOWN.length)",
    replace: 'i = -1',
    tests: FORBIDDEN
  },
  {
    area: 'forbidden',
    file: 'lib/pipeline/stages/forbidden.js',
    what: 'dotfiles: "ignore" serves them instead of 404',
    find: "dotfiles === 'ignore' ? 404 : 0",
    replace: '0',
    tests: FORBIDDEN
  },
  // Symlink containment
  {
    area: 'symlinks',
    file: 'lib/file-store/symlinks.js',
    what: 'containment by startsWith(realRoot) without the separator (a sibling "webrootx" passes)',
    find: 'const prefix = realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep',
    replace: 'const prefix = realRoot',
    tests: SYMLINKS
  },
  {
    area: 'symlinks',
    file: 'lib/file-store/symlinks.js',
    what: '"never" compares lexical paths only, so a link in a directory passes',
    find: 'return real === realRoot + trimTrailingSeparator(file.slice(lexicalRoot.length))',
    replace: 'return real.startsWith(realRoot)',
    tests: SYMLINKS
  },
  {
    area: 'symlinks',
    file: 'lib/file-store/symlinks.js',
    what: 'a remembered verdict is reused after the path was replaced by a link',
    find: 'return known.ino === stat.ino && known.dev === stat.dev && known.ctimeMs === stat.ctimeMs',
    replace: 'return true',
    tests: SYMLINKS
  },
  // Basic auth: throttle and verification
  {
    area: 'auth',
    file: 'lib/auth/login.js',
    what: 'login attempts counted after the password check instead of before',
    find: '    const wait = await (counted ? throttle.attempt(address, name) : throttle.check(address, name))\n' +
      '    if (wait !== 0) return { wait, user: null }\n' +
      '  }\n' +
      '  const user = await verifier.verify(name, password, rule.userList)\n',
    replace: '    const wait = await throttle.check(address, name)\n' +
      '    if (wait !== 0) return { wait, user: null }\n' +
      '  }\n' +
      '  const user = await verifier.verify(name, password, rule.userList)\n' +
      '  if (user === null && rule.throttled) {\n' +
      '    const wait = await throttle.attempt(address, name)\n' +
      '    if (wait !== 0) return { wait, user: null }\n' +
      '  }\n',
    tests: AUTH
  },
  {
    area: 'auth',
    file: 'lib/auth/throttle.js',
    what: 'the lock starts one attempt early (>= instead of >)',
    find: 'if (entry.attempts > limit) {',
    replace: 'if (entry.attempts >= limit) {',
    tests: AUTH
  },
  {
    area: 'auth',
    file: 'lib/auth/throttle.js',
    what: 'a successful login does not clear the (address, user) counter',
    find: '    this.pairs.delete(pairKey(network, user))\n',
    replace: '',
    tests: AUTH
  },
  {
    area: 'auth',
    file: 'lib/auth/throttle.js',
    what: 'IPv6 clients counted per address instead of per /64',
    find: "groups.slice(0, 4).join(':') + '::/64'",
    replace: 'address',
    tests: AUTH
  },
  {
    area: 'auth',
    file: 'lib/auth/verify.js',
    what: 'the rule\'s userList is ignored',
    find: '(allowed !== null && !allowed.has(name))',
    replace: 'false',
    tests: AUTH
  },
  {
    area: 'auth',
    file: 'lib/auth/success-cache.js',
    what: 'remembered logins keyed by the user name alone, so any password passes after a success',
    find: ".update(name).update('\\0').update(password)",
    replace: '.update(name)',
    tests: AUTH
  },
  // Client address behind proxies
  {
    area: 'client-address',
    file: 'lib/access/client-address.js',
    what: 'X-Forwarded-For believed from any peer, not only trusted proxies',
    find: 'if (isTrusted === null || !isTrusted(ctx.clientAddress)) return',
    replace: 'if (isTrusted === null) return',
    tests: CLIENT_ADDRESS
  },
  {
    area: 'client-address',
    file: 'lib/access/client-address.js',
    what: 'the leftmost X-Forwarded-For entry taken (SVR.JS) instead of walking right to left',
    find: 'for (let i = hops.length - 1; i > 0; i--) {',
    replace: 'for (let i = 1; i < hops.length; i++) {',
    tests: CLIENT_ADDRESS
  },
  {
    area: 'client-address',
    file: 'lib/access/client-address.js',
    what: 'a hop that is not an IP address is trusted',
    find: 'return address !== null && isTrusted(address)',
    replace: 'return address === null || isTrusted(address)',
    tests: CLIENT_ADDRESS
  },
  // Body limit
  {
    area: 'limits',
    file: 'lib/worker/limits.js',
    what: 'a Content-Length over maxRequestBodySize is let through',
    find: 'return length !== undefined && Number(length) > max',
    replace: 'return length !== undefined && Number(length) > max * 2',
    tests: ['test/http/limits.test.js', 'test/http/post-data.test.js']
  },
  // Drain and stop
  {
    area: 'lifecycle',
    file: 'lib/worker/servers.js',
    what: 'no keep-alive grace on drain: idle connections closed at once',
    find: 'const DRAIN_IDLE_GRACE_MS = 1000',
    replace: 'const DRAIN_IDLE_GRACE_MS = 0',
    tests: LIFECYCLE
  },
  {
    area: 'lifecycle',
    file: 'lib/worker/servers.js',
    what: 'responses during the drain do not say Connection: close',
    find: '    if (state.draining) res.shouldKeepAlive = false\n    else runtime.balance.shedIfOverShare(req, res)\n',
    replace: '    runtime.balance.shedIfOverShare(req, res)\n',
    tests: LIFECYCLE
  },
  {
    area: 'lifecycle',
    file: 'lib/worker/worker.js',
    what: 'a worker (and so --single-threaded) exits without waiting for the drain',
    find: '    await shutDown(state.servers, delay)\n',
    replace: '    shutDown(state.servers, delay)\n',
    tests: [...LIFECYCLE, ...SINGLE]
  },
  // Reload
  {
    area: 'reload',
    file: 'lib/primary/worker-slots.js',
    what: 'a reload retires the old worker before its replacement is ready',
    find: '    const fresh = this.fork(slot, options)\n',
    replace: '    if (slot.worker !== null) this.retire(slot.worker)\n    const fresh = this.fork(slot, options)\n',
    tests: [...LIFECYCLE, ...SINGLE]
  },
  {
    area: 'reload',
    file: 'lib/primary/connection-feed.js',
    what: '--single-threaded hands new connections to the worker it started first, not to the one a reload started',
    find: '    this.ports.push(port)\n',
    replace: '    if (this.ports.length === 0) this.ports.push(port)\n',
    tests: SINGLE
  }
].concat(
  require('./mutations/proxy'),
  require('./mutations/traffic'),
  require('./mutations/cache'),
  require('./mutations/acme'),
  require('./mutations/supervisor'),
  require('./mutations/http2-logging'),
  require('./mutations/indexes'),
  require('./mutations/mods'),
  require('./mutations/architecture'),
  require('./mutations/grpc'),
  require('./mutations/fleet'),
  require('./mutations/dispatch'),
  require('./mutations/request-fields'),
  require('./mutations/regexes'),
  require('./mutations/script-values'),
  require('./mutations/file-caches')
)
