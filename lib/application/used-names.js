'use strict'

// Words in a script's text that give its code the values of its
// parameters without naming them: `eval` (direct eval sees the function's
// scope), `arguments` (and `f.caller.arguments`, which a sloppy-mode
// function can reach), and a `\u` escape, which can spell an identifier
// (`\u0075object` is `uobject`).
const DYNAMIC_ACCESS = /\beval\b|\barguments\b|\\u/
const WORD = /[A-Za-z_$][\w$]*/g

/**
 * Which of `names` a script's text can refer to: each one that appears in
 * it as a whole word, in code, a comment or a string alike (an extra name
 * only costs the value being made), or all of them when the text reaches
 * its scope dynamically. The script runtime makes per request only the
 * values a script can see.
 * @param {string} source
 * @param {readonly string[]} names
 * @returns {Set<string>}
 */
function usedNames (source, names) {
  if (DYNAMIC_ACCESS.test(source)) return new Set(names)
  const wanted = new Set(names)
  const used = new Set()
  for (const [word] of source.matchAll(WORD)) {
    if (wanted.has(word)) used.add(word)
  }
  return used
}

module.exports = { usedNames }
