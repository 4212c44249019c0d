'use strict'

// SVR.JS 3.x's mapping of file-system errors to statuses, with EPERM and ENFILE beside
// their closer cousins.
const STATUS_BY_CODE = {
  ENOENT: 404,
  ENOTDIR: 404,
  EACCES: 403,
  EPERM: 403,
  ENAMETOOLONG: 414,
  EMFILE: 503,
  ENFILE: 503,
  ELOOP: 508
}

/**
 * The status that answers a failed file system call on the request's path.
 * @param {NodeJS.ErrnoException|null} err
 * @returns {number} 404 for a missing file (err null), 500 for anything unexpected
 */
function statusForFsError (err) {
  if (err === null) return 404
  return STATUS_BY_CODE[err.code] || 500
}

module.exports = { statusForFsError }
