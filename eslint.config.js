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
    // Guard rails, printed as warnings: a file or function past these sizes
    // usually holds more than one concern. Data tables are exempt.
    files: ['lib/**/*.js'],
    ignores: ['lib/error-pages/descriptions.js', 'lib/listing/icons.js'],
    rules: {
      'max-lines': ['warn', { max: 300, skipBlankLines: true, skipComments: true }],
      'max-lines-per-function': ['warn', { max: 60, skipBlankLines: true, skipComments: true }],
      complexity: ['warn', 15]
    }
  },
  {
    // serverSideScript.js is a function body in SVR.JS 3.x form: top-level return and implicit names
    files: ['serverSideScript.js'],
    languageOptions: { parserOptions: { ecmaFeatures: { globalReturn: true } } },
    rules: { 'no-undef': 'off', strict: 'off', 'no-var': 'off' }
  }
]
