// Undo (and the redo it keeps ready) over snapshots of the workspace's sets.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { UNDO_LIMIT, UndoHistory } from "../../../frontend/static/frontend/undo_history.js";

describe("UndoHistory", () => {
  test("undo returns the recorded states, latest first", () => {
    const history = new UndoHistory();
    history.record("a");
    history.record("b");
    assert.equal(history.undo("c"), "b");
    assert.equal(history.undo("b"), "a");
  });

  test("undo past the start returns null and keeps nothing for redo", () => {
    const history = new UndoHistory();
    assert.equal(history.undo("now"), null);
    history.record("a");
    assert.equal(history.undo("b"), "a");
    assert.equal(history.undo("a"), null);
    assert.equal(history.redo("a"), "b");
    assert.equal(history.redo("b"), null);
  });

  test("redo returns what undo left, and the present can be undone again", () => {
    const history = new UndoHistory();
    history.record("a");
    history.record("b");
    history.undo("c");
    history.undo("b");
    assert.equal(history.redo("a"), "b");
    assert.equal(history.redo("b"), "c");
    assert.equal(history.redo("c"), null);
    assert.equal(history.undo("c"), "b");
  });

  test("a new change after an undo drops what redo would have returned", () => {
    const history = new UndoHistory();
    history.record("a");
    history.undo("b");
    history.record("a");
    assert.equal(history.redo("x"), null);
  });

  test("keeps the last `limit` states, dropping the oldest", () => {
    const history = new UndoHistory(3);
    for (const state of ["a", "b", "c", "d", "e"]) history.record(state);
    assert.deepEqual([history.undo("f"), history.undo("e"), history.undo("d"), history.undo("c")], ["e", "d", "c", null]);
  });

  test("the workspace's limit is 200 steps", () => {
    const history = new UndoHistory();
    assert.equal(UNDO_LIMIT, 200);
    for (let n = 0; n < 250; n += 1) history.record(n);
    let steps = 0;
    let oldest = null;
    for (let state = history.undo(-1); state !== null; state = history.undo(state)) {
      steps += 1;
      oldest = state;
    }
    assert.equal(steps, 200);
    assert.equal(oldest, 50);
  });

  test("an empty state (an empty list of sets) is a state like any other", () => {
    const history = new UndoHistory();
    history.record([[]]);
    assert.deepEqual(history.undo([[["d1", [0]]]]), [[]]);
  });

  test("a limit that is not a positive integer is refused, naming it", () => {
    assert.throws(() => new UndoHistory(0), /undo limit must be a positive integer, not 0/);
    assert.throws(() => new UndoHistory(1.5), /not 1\.5/);
  });
});
