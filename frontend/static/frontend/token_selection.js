// @ts-check
// Where the annotator is among an item's tokens: the cursor the arrow keys move, the anchor
// a plain click leaves for shift-click to extend from, and a drag in progress. Plain data
// only (no DOM, no window), so that `node --test` checks it; the workspace paints the tokens.

/** A token by its document's index among the shown documents and its own index there.
 * @typedef {{doc: number, token: number}} TokenPosition */
/** Consecutive tokens of one document, `from` <= `to`, both included.
 * @typedef {{doc: number, from: number, to: number}} TokenRun */
/** @typedef {"add"|"remove"} RunMode */

/** The run from the anchor to the token under the pointer, whichever comes first in the
 * text, or null when the pointer is in another document: a run never crosses documents.
 * @param {TokenPosition} anchor @param {TokenPosition} pointer @returns {TokenRun|null} */
export function runBetween(anchor, pointer) {
  if (anchor.doc !== pointer.doc) return null;
  return {
    doc: anchor.doc,
    from: Math.min(anchor.token, pointer.token),
    to: Math.max(anchor.token, pointer.token),
  };
}

/** The parts of `previous` that `next` no longer covers (none, one or two runs): the tokens
 * a drag has come back over, which return to what they were before the drag.
 * @param {TokenRun} previous @param {TokenRun} next @returns {TokenRun[]} */
export function runsUncovered(previous, next) {
  if (previous.doc !== next.doc) return [previous];
  /** @type {TokenRun[]} */ const left = [];
  if (previous.from < next.from) left.push({ doc: previous.doc, from: previous.from, to: Math.min(previous.to, next.from - 1) });
  if (previous.to > next.to) left.push({ doc: previous.doc, from: Math.max(previous.from, next.to + 1), to: previous.to });
  return left;
}

/** The token `step` tokens from `position`, going on into the next (or previous) document
 * that has tokens to highlight; the position itself when there is none that way.
 * @param {TokenPosition} position
 * @param {number} step +1 or -1
 * @param {number[]} lengths how many tokens each shown document offers (0 for one that
 *   cannot be highlighted)
 * @returns {TokenPosition} */
export function stepFrom(position, step, lengths) {
  let d = position.doc;
  let i = position.token + step;
  while (i < 0 || i >= (lengths[d] ?? 0)) {
    const next = d + (i < 0 ? -1 : 1);
    if (next < 0 || next >= lengths.length) return position;
    d = next;
    i = i < 0 ? lengths[d] - 1 : 0;
  }
  return { doc: d, token: i };
}

/** The next (step +1) or previous (step -1) place among `starts` from `position`, going on
 * into the following (or earlier) documents; null when there is none that way.
 * @param {TokenPosition} position
 * @param {number} step +1 or -1
 * @param {number[][]} starts each shown document's places (highlights' first tokens) in
 *   ascending order
 * @returns {TokenPosition|null} */
export function jumpFrom(position, step, starts) {
  for (let d = position.doc; d >= 0 && d < starts.length; d += step) {
    const places = starts[d] || [];
    const found = step > 0
      ? places.find((token) => d > position.doc || token > position.token)
      : [...places].reverse().find((token) => d < position.doc || token < position.token);
    if (found !== undefined) return { doc: d, token: found };
  }
  return null;
}

export class TokenSelection {
  /** @param {TokenPosition} [cursor] */
  constructor(cursor = { doc: 0, token: 0 }) {
    /** @type {TokenPosition} */ this.cursor = { ...cursor };
    /** Where the last plain click landed: shift-click extends from here.
     * @type {TokenPosition|null} */
    this.anchor = null;
    /** A drag in progress: where it began, whether it adds or removes tokens, and the run
     * it covers now.
     * @type {{start: TokenPosition, mode: RunMode, covered: TokenRun}|null} */
    this.drag = null;
  }

  /** Moves the cursor and answers where it was, for the caller to repaint both.
   * @param {TokenPosition} to @returns {TokenPosition} */
  moveCursor(to) {
    const from = this.cursor;
    this.cursor = { doc: to.doc, token: to.token };
    return from;
  }

  /** @param {number} doc @param {number} token */
  isCursor(doc, token) {
    return this.cursor.doc === doc && this.cursor.token === token;
  }

  /** A plain press on a token: it becomes the anchor and a drag begins there, adding or
   * removing tokens. Answers the run to apply now: the token alone.
   * @param {TokenPosition} at @param {RunMode} mode @returns {TokenRun} */
  press(at, mode) {
    this.anchor = { doc: at.doc, token: at.token };
    const run = /** @type {TokenRun} */ (runBetween(at, at));
    this.drag = { start: { doc: at.doc, token: at.token }, mode, covered: run };
    return run;
  }

  /** A shift-press: the run from the anchor to this token, or null when there is no anchor
   * in this document (the press is then a plain one). The anchor stays where it was.
   * @param {TokenPosition} at @returns {TokenRun|null} */
  extendTo(at) {
    return this.anchor ? runBetween(this.anchor, at) : null;
  }

  /** The pointer over a token while dragging: the run from where the drag began, or null
   * when no drag is in progress or the pointer is in another document.
   * @param {TokenPosition} at @returns {TokenRun|null} */
  dragTo(at) {
    return this.drag ? runBetween(this.drag.start, at) : null;
  }

  /** The pointer over a token while dragging, as a step: the run the drag covers now (from
   * where it began to the pointer, exactly) and the tokens it covered a step ago but no
   * longer does, which go back to how they were before the drag. Null when no drag is in
   * progress or the pointer is in another document.
   * @param {TokenPosition} at @returns {{run: TokenRun, uncovered: TokenRun[]}|null} */
  dragStep(at) {
    const run = this.dragTo(at);
    if (!run || !this.drag) return null;
    const uncovered = runsUncovered(this.drag.covered, run);
    this.drag.covered = run;
    return { run, uncovered };
  }

  /** Ends a drag; answers whether one was in progress. */
  release() {
    const dragging = this.drag !== null;
    this.drag = null;
    return dragging;
  }
}
