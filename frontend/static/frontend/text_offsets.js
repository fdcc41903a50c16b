// @ts-check
// The server counts a text's characters in code points (Python's str); a JavaScript string
// counts UTF-16 code units, two for an emoji or any character beyond the first 65,536.
// Slicing by the server's offsets would cut such a text's tokens in the wrong places. Plain
// data only (no DOM, no window), so that `node --test` checks it.

/** A function from the server's character offsets in `text` to JavaScript string offsets
 * (the identity when the text has no character beyond the first plane).
 * @param {string} text @returns {(offset: number) => number} */
export function codeUnitsOf(text) {
  if (!/[\uD800-\uDBFF]/.test(text)) return (offset) => offset;
  /** @type {number[]} */ const units = [];
  let unit = 0;
  for (const char of text) {
    units.push(unit);
    unit += char.length;
  }
  units.push(unit);
  return (offset) => units[Math.min(Math.max(offset, 0), units.length - 1)];
}
