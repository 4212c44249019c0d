'use strict'

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { sanitizePath, classifyRewrite } = require('../../lib/paths/sanitize-path')
const { fixRawBytes, decodePath } = require('../../lib/paths/percent')

// What SVR.JS 3.15.7's sanitizer gives for these paths, except that raw `<` `>`
// are encoded (3.x let them through because of a stray `]` in its regex).
const GOLDEN = [
  ['/a/../index.html', '/index.html'],
  ['/%2e%2e/etc/passwd', '/etc/passwd'],
  ['/..%2f..%2fetc', '/etc'],
  ['/a%5c..%5cb', '/b'],
  ['/a\\..\\b', '/b'],
  ['//a//b', '/a/b'],
  ['/index.html.', '/index.html'],
  ['/conf%69g.json', '/config.json'],
  ['/a%00b', '/ab'],
  ['/...', '/'],
  ['/a/.../b', '/a/b'],
  ['/a/..../b', '/a/b'],
  ['/test%20x', '/test%20x'],
  ['/%7e', '/~'],
  ['/%c0%af', null],
  ['/x%ZZ', null],
  ['/.hidden', '/.hidden'],
  ['/test<x>', '/test%3Cx%3E']
]

function check (input, expected, allowDoubleSlashes) {
  assert.equal(sanitizePath(input, allowDoubleSlashes), expected, `sanitizePath(${JSON.stringify(input)})`)
}

describe('sanitizePath(pathname, allowDoubleSlashes)', () => {
  describe('with the SVR.JS 3.x golden table', () => {
    for (const [input, expected] of GOLDEN) {
      it(`should turn ${JSON.stringify(input)} into ${JSON.stringify(expected)}`, () => {
        check(input, expected, false)
      })
    }

    it('should keep //a//b when double slashes are allowed', () => {
      check('//a//b', '//a//b', true)
    })
  })

  describe('with the special targets', () => {
    it('should return * and the empty string unchanged', () => {
      check('*', '*')
      check('', '')
    })
  })

  describe('with traversal attempts', () => {
    it('should resolve encoded dot segments in any hex case', () => {
      for (const input of ['/%2e%2e%2fetc/passwd', '/%2E%2E%2Fetc/passwd', '/%2e%2E%2Fetc/passwd', '/.%2e/etc/passwd', '/%2e./etc/passwd']) {
        check(input, '/etc/passwd')
      }
      check('/a/b/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc', '/etc')
      check('/a/%2e/b', '/a/b')
    })

    it('should treat encoded and raw backslashes as slashes', () => {
      check('/a%5C..%5C..%5Cetc', '/etc')
      check('/..\\..\\windows\\win.ini', '/windows/win.ini')
      check('\\..\\x', '/x')
    })

    it('should drop .. at the root and resolve it inside the path', () => {
      check('/..', '/')
      check('/../../x', '/x')
      check('/a/b/../../../c', '/c')
      check('..', '/')
    })

    it('should drop segments of three or more dots', () => {
      check('/a/.../b', '/a/b')
      check('/a/%2e%2e%2e/b', '/a/b')
      check('/.../..../x', '/x')
    })

    it('should strip trailing dots from every segment', () => {
      check('/index.html...', '/index.html')
      check('/dir./file.', '/dir/file')
      check('/a../b', '/a/b')
      check('/.env.', '/.env')
    })
  })

  describe('with percent escapes', () => {
    it('should decode escapes of unreserved and sub-delim characters', () => {
      check('/%41', '/A')
      check('/%7e', '/~')
      check('/a%2fb', '/a/b')
      check('/%28x%29%2B%40%3A', '/(x)+@:')
    })

    it('should keep escapes of space, %, specials and controls, upper-cased', () => {
      check('/test%20x', '/test%20x')
      check('/100%25.txt', '/100%25.txt')
      check('/a%3fb%23c', '/a%3Fb%23c')
      check('/%3c%3e%22%5e%60%7b%7c%7d', '/%3C%3E%22%5E%60%7B%7C%7D')
      check('/a%0d%0ab%7f', '/a%0D%0Ab%7F')
    })

    it('should keep valid UTF-8 sequences encoded, upper-cased', () => {
      check('/%e2%82%ac', '/%E2%82%AC')
      check('/caf%C3%A9', '/caf%C3%A9')
      check('/%f0%9f%98%80', '/%F0%9F%98%80')
    })

    it('should reject malformed escapes', () => {
      check('/x%ZZ', null)
      check('/x%', null)
      check('/x%4', null)
      check('/x%4g', null)
      check('/%%41', null)
    })

    it('should reject bytes that never occur in UTF-8 in any case', () => {
      for (const input of ['/%c0%af', '/%C0%AF', '/%c1%81', '/%fe', '/%FF', '/%Fe']) check(input, null)
    })

    it('should reject invalid UTF-8', () => {
      check('/%e2%82', null) // truncated sequence
      check('/%82', null) // lone continuation byte
      check('/%e0%80%af', null) // overlong
      check('/%ed%a0%80', null) // encoded surrogate
      check('/%f4%90%80%80', null) // beyond U+10FFFF
      check('/%e2/../%82%ac', null) // broken even if `..` removes part of it
    })
  })

  describe('with NUL bytes', () => {
    it('should remove encoded and raw NULs', () => {
      check('/a%00b', '/ab')
      check('/a\u0000b', '/ab')
      check('/.%00./x', '/x')
      check('%00', '/')
    })
  })

  describe('with raw characters', () => {
    it('should re-encode characters that are unsafe in a URL', () => {
      check('/test<x>', '/test%3Cx%3E')
      check('/a"b^c`d{e|f}', '/a%22b%5Ec%60d%7Be%7Cf%7D')
      check('/a#b', '/a%23b')
      check('/a b\tc', '/a%20b%09c')
    })

    it('should UTF-8 encode non-ASCII characters and reject lone surrogates', () => {
      check('/café', '/caf%C3%A9')
      check('/\u{1f600}', '/%F0%9F%98%80')
      check('/\ud800x', null)
    })

    it('should keep other printable characters raw', () => {
      check("/a!$&'()*+,;=:@[]~_-", "/a!$&'()*+,;=:@[]~_-")
    })
  })

  describe('with slashes', () => {
    it('should prefix a missing leading slash', () => {
      check('a/b', '/a/b')
      check('%2fa', '/a')
    })

    it('should collapse every run of slashes when double slashes are not allowed', () => {
      check('//a//b', '/a/b')
      check('/a///b////', '/a/b/')
      check('/a/%2f/b', '/a/b')
    })

    it('should keep // and collapse longer runs to // when double slashes are allowed', () => {
      check('//a//b', '//a//b', true)
      check('///a////b', '//a//b', true)
      check('/a///', '/a//', true)
      check('/a//b/..//c', '/a//c', true)
      check('/a//../b', '/a/b', true)
    })

    it('should keep a trailing slash', () => {
      check('/a/b/', '/a/b/')
      check('/a/./', '/a/')
      check('/a/.', '/a/')
      check('/a/..', '/')
      check('/a/b/..', '/a/')
      check('/', '/')
    })
  })

  describe('with an already clean path', () => {
    it('should return it unchanged', () => {
      for (const input of ['/', '/index.html', '/a/b/', '/.well-known/x', '/a%20b', '/%E2%82%AC']) check(input, input)
    })
  })
})

describe('classifyRewrite(path, allowDoubleSlashes)', () => {
  it('should call a path that sanitizes to itself clean', () => {
    assert.equal(classifyRewrite('/index.html'), 'clean')
    assert.equal(classifyRewrite('//a', true), 'clean')
  })

  it('should call a path with ./ or // normalised', () => {
    assert.equal(classifyRewrite('/a/./b'), 'normalised')
    assert.equal(classifyRewrite('//a'), 'normalised')
    assert.equal(classifyRewrite('/a%41'), 'normalised')
  })

  it('should call a path with a .. segment or a malformed escape escapes', () => {
    assert.equal(classifyRewrite('/a/../b'), 'escapes')
    assert.equal(classifyRewrite('/../b'), 'escapes')
    assert.equal(classifyRewrite('/%2e%2e/b'), 'escapes')
    assert.equal(classifyRewrite('/x%ZZ'), 'escapes')
  })

  it('should not carry the verdict over from an earlier call', () => {
    assert.equal(classifyRewrite('/a/../b'), 'escapes')
    sanitizePath('/a/../b')
    assert.equal(classifyRewrite('/b'), 'clean')
  })
})

describe('fixRawBytes(url)', () => {
  it('should return an ASCII target unchanged', () => {
    const url = '/a/b?c=d%2F'
    assert.equal(fixRawBytes(url), url)
  })

  it('should escape latin-1 characters byte by byte', () => {
    assert.equal(fixRawBytes('/caf\u00e9'), '/caf%E9')
    // UTF-8 bytes of é as Node's latin-1 decoding hands them over
    assert.equal(fixRawBytes('/caf\u00c3\u00a9'), '/caf%C3%A9')
    assert.equal(fixRawBytes('/\u00e9?q=\u00c3\u00a9'), '/%E9?q=%C3%A9')
  })

  it('should escape raw spaces and control characters', () => {
    assert.equal(fixRawBytes('/a b\u0001\u007f'), '/a%20b%01%7F')
  })

  it('should upper-case existing escapes and leave malformed ones alone', () => {
    assert.equal(fixRawBytes('/%e2%82%ac?x=%2f'), '/%E2%82%AC?x=%2F')
    assert.equal(fixRawBytes('/%zz%4'), '/%zz%4')
  })

  it('should UTF-8 encode characters beyond latin-1', () => {
    assert.equal(fixRawBytes('/\u20ac'), '/%E2%82%AC')
    assert.equal(fixRawBytes('/\u{1f600}'), '/%F0%9F%98%80')
    assert.equal(fixRawBytes('/\udc00'), '/%EF%BF%BD')
  })

  it('should produce input the sanitizer decodes back to the original text', () => {
    const path = sanitizePath(fixRawBytes('/caf\u00c3\u00a9'))
    assert.equal(decodePath(path), '/café')
  })
})

describe('decodePath(pathname)', () => {
  it('should decode every escape', () => {
    assert.equal(decodePath('/a%20b%2F%E2%82%AC'), '/a b/€')
  })

  it('should return null instead of throwing', () => {
    assert.equal(decodePath('/%E2%82'), null)
    assert.equal(decodePath('/%'), null)
  })
})
