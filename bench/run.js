'use strict'

// The benchmark harness (svr side by side with a bare Node cluster and
// nginx, reported as ratios) is not written yet; until then `npm run bench`
// says so instead of printing numbers nobody measured.
console.error('bench: no benchmark yet; the harness arrives with the performance work (see HISTORY.md)')
process.exitCode = 1
