// @ts-check
// Undo (and redo) over snapshots of some state: the caller records the state before each
// change, and undoing hands the present over to redo. Plain data only (no DOM, no window),
// so that `node --test` checks it.

/** The workspace keeps this many steps back; older ones are dropped first. */
export const UNDO_LIMIT = 200;

/** @template T */
export class UndoHistory {
  /** @param {number} [limit] */
  constructor(limit = UNDO_LIMIT) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`undo limit must be a positive integer, not ${limit}`);
    this.limit = limit;
    /** @type {T[]} */ this.past = [];
    /** @type {T[]} */ this.future = [];
  }

  /** The state before a change. A new change makes what was undone unreachable.
   * @param {T} state */
  record(state) {
    this.past.push(state);
    if (this.past.length > this.limit) this.past.shift();
    this.future = [];
  }

  /** The state before the last recorded change, or null at the start of the history; the
   * present, passed in, becomes what a redo returns to.
   * @param {T} present @returns {T|null} */
  undo(present) {
    const previous = this.past.pop();
    if (previous === undefined) return null;
    this.future.push(present);
    return previous;
  }

  /** The state the last undo left, or null when nothing was undone since the last change;
   * the present becomes undoable again.
   * @param {T} present @returns {T|null} */
  redo(present) {
    const next = this.future.pop();
    if (next === undefined) return null;
    this.past.push(present);
    return next;
  }
}
