'use strict'

// The 22 positional parameters of an SVR.JS 3.x mod callback, which are also
// the names in scope of a serverSideScript.js, in their order.
const LEGACY_NAMES = Object.freeze([
  'req', 'res', 'serverconsole', 'responseEnd', 'href', 'ext', 'uobject', 'search', 'defaultpage', 'users',
  'page404', 'head', 'foot', 'fd', 'elseCallback', 'configJSON', 'callServerError', 'getCustomHeaders',
  'origHref', 'redirect', 'parsePostData', 'authUser'
])

module.exports = { LEGACY_NAMES }
