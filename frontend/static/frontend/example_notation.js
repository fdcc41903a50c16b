// @ts-check
// A variant's example annotation as one line an admin can read and edit: its tokens joined
// by spaces, each highlighted token in brackets ("The [acting] was [superb] ."), and back.
// The pure part of the Instructions page's example editor (project_admin.js).

/** @typedef {{tokens: string[], highlighted: number[], label?: string, note?: string}} VariantExample */

/** @param {VariantExample} example @returns {string} */
export function exampleToNotation(example) {
  const marked = new Set(example.highlighted);
  return example.tokens.map((token, i) => (marked.has(i) ? `[${token}]` : token)).join(" ");
}

/** Tokens and highlights from the notation; a token is highlighted when it is wrapped in
 * brackets whole ("[word]"); "[" or "]" alone, or inside a token, stay text.
 * @param {string} line @returns {{tokens: string[], highlighted: number[]}} */
export function exampleFromNotation(line) {
  /** @type {string[]} */ const tokens = [];
  /** @type {number[]} */ const highlighted = [];
  for (const part of line.trim().split(/\s+/).filter(Boolean)) {
    const whole = /^\[(.+)\]$/.exec(part);
    if (whole) highlighted.push(tokens.length);
    tokens.push(whole ? whole[1] : part);
  }
  return { tokens, highlighted };
}
