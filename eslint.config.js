'use strict'

const js = require('@eslint/js')
const globals = require('globals')

module.exports = [
  { ignores: ['node_modules/', 'coverage/', 'test/artifacts/', 'webroot/'] },
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'commonjs',
      globals: { ...globals.node }
    },
    rules: {
      'no-unused-vars': ['error', { args: 'none' }],
      strict: ['error', 'global'],
      'prefer-const': 'error',
      'no-var': 'error',
      eqeqeq: ['error', 'smart']
    }
  },
  {
    // serverSideScript.js is a function body in SVR.JS 3.x form: top-level return and implicit names
    files: ['serverSideScript.js'],
    languageOptions: { parserOptions: { ecmaFeatures: { globalReturn: true } } },
    rules: { 'no-undef': 'off', strict: 'off', 'no-var': 'off' }
  }
]
