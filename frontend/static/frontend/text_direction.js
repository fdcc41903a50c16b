// @ts-check
// Right-to-left words inside left-to-right text (an Arabic or Hebrew name in an English
// review). Each token is shown in its own element; left to themselves, a run of such
// elements would be ordered by the English paragraph, and a token could be split into pieces
// on both sides of its neighbours. The workspace wraps each right-to-left run in an isolated
// element of that direction, so the run reads right and each of its tokens stays one box.
// Plain data only (no DOM, no window), so that `node --test` checks it.

/** Hebrew, Arabic, Syriac, Thaana, N'Ko, Samaritan, Mandaic, and their presentation forms. */
const RIGHT_TO_LEFT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]|[\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const LETTER = /\p{L}/u;

/** A token's direction by its first letter: "rtl", "ltr", or "neutral" when it has no letter
 * (punctuation, digits, emoji). @param {string} token @returns {"rtl"|"ltr"|"neutral"} */
export function tokenDirection(token) {
  for (const char of token) {
    if (RIGHT_TO_LEFT.test(char)) return "rtl";
    if (LETTER.test(char)) return "ltr";
  }
  return "neutral";
}

/** Which tokens belong to a right-to-left run: the right-to-left ones, and neutral ones
 * (a comma, a number) between two right-to-left ones with no line break in between.
 * @param {string} text @param {number[][]} tokens [start, end] character offsets
 * @returns {boolean[]} */
export function rightToLeftRuns(text, tokens) {
  const directions = tokens.map(([start, end]) => tokenDirection(text.slice(start, end)));
  const inRun = directions.map((direction) => direction === "rtl");
  let i = 0;
  while (i < tokens.length) {
    if (directions[i] !== "neutral") { i += 1; continue; }
    let j = i;
    while (j < tokens.length && directions[j] === "neutral") j += 1;
    const broken = i > 0 && j < tokens.length && text.slice(tokens[i - 1][1], tokens[j][0]).includes("\n");
    if (i > 0 && j < tokens.length && directions[i - 1] === "rtl" && directions[j] === "rtl" && !broken) {
      for (let k = i; k < j; k += 1) inRun[k] = true;
    }
    i = j;
  }
  return inRun;
}
