// The selection model of the annotator workspace: runs, cursor steps, press, shift-press, drag.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { jumpFrom, runBetween, runsUncovered, stepFrom, TokenSelection } from "../../../frontend/static/frontend/token_selection.js";

describe("runBetween", () => {
  test("runs from the anchor to the pointer, both included", () => {
    assert.deepEqual(runBetween({ doc: 1, token: 2 }, { doc: 1, token: 5 }), { doc: 1, from: 2, to: 5 });
  });

  test("a pointer before the anchor gives the same run in reading order", () => {
    assert.deepEqual(runBetween({ doc: 0, token: 7 }, { doc: 0, token: 3 }), { doc: 0, from: 3, to: 7 });
  });

  test("the anchor itself is a run of one token", () => {
    assert.deepEqual(runBetween({ doc: 0, token: 4 }, { doc: 0, token: 4 }), { doc: 0, from: 4, to: 4 });
  });

  test("a pointer in another document gives no run", () => {
    assert.equal(runBetween({ doc: 0, token: 4 }, { doc: 1, token: 4 }), null);
  });
});

describe("stepFrom", () => {
  const lengths = [3, 0, 2];

  test("moves within a document", () => {
    assert.deepEqual(stepFrom({ doc: 0, token: 1 }, 1, lengths), { doc: 0, token: 2 });
    assert.deepEqual(stepFrom({ doc: 0, token: 1 }, -1, lengths), { doc: 0, token: 0 });
  });

  test("goes on into the next document, over one without tokens to highlight", () => {
    assert.deepEqual(stepFrom({ doc: 0, token: 2 }, 1, lengths), { doc: 2, token: 0 });
  });

  test("goes back to the previous document's last token, over an empty one", () => {
    assert.deepEqual(stepFrom({ doc: 2, token: 0 }, -1, lengths), { doc: 0, token: 2 });
  });

  test("stays put at the first and the last token", () => {
    assert.deepEqual(stepFrom({ doc: 0, token: 0 }, -1, lengths), { doc: 0, token: 0 });
    assert.deepEqual(stepFrom({ doc: 2, token: 1 }, 1, lengths), { doc: 2, token: 1 });
  });

  test("stays put when no document has a token", () => {
    assert.deepEqual(stepFrom({ doc: 0, token: 0 }, 1, [0, 0]), { doc: 0, token: 0 });
    assert.deepEqual(stepFrom({ doc: 0, token: 0 }, 1, []), { doc: 0, token: 0 });
  });
});

describe("TokenSelection", () => {
  test("moving the cursor answers where it was", () => {
    const selection = new TokenSelection({ doc: 0, token: 3 });
    const from = selection.moveCursor({ doc: 1, token: 0 });
    assert.deepEqual(from, { doc: 0, token: 3 });
    assert.ok(selection.isCursor(1, 0));
    assert.ok(!selection.isCursor(0, 3));
  });

  test("a press is a run of the pressed token and begins a drag in its mode", () => {
    const selection = new TokenSelection();
    assert.deepEqual(selection.press({ doc: 0, token: 4 }, "remove"), { doc: 0, from: 4, to: 4 });
    assert.deepEqual(selection.drag, { start: { doc: 0, token: 4 }, mode: "remove", covered: { doc: 0, from: 4, to: 4 } });
    assert.deepEqual(selection.anchor, { doc: 0, token: 4 });
  });

  test("dragging runs from where the drag began, backwards too", () => {
    const selection = new TokenSelection();
    selection.press({ doc: 0, token: 4 }, "add");
    assert.deepEqual(selection.dragTo({ doc: 0, token: 8 }), { doc: 0, from: 4, to: 8 });
    assert.deepEqual(selection.dragTo({ doc: 0, token: 1 }), { doc: 0, from: 1, to: 4 });
  });

  test("dragging into another document gives no run", () => {
    const selection = new TokenSelection();
    selection.press({ doc: 0, token: 4 }, "add");
    assert.equal(selection.dragTo({ doc: 1, token: 4 }), null);
  });

  test("without a press there is no drag, and releasing says so", () => {
    const selection = new TokenSelection();
    assert.equal(selection.dragTo({ doc: 0, token: 2 }), null);
    assert.equal(selection.release(), false);
  });

  test("releasing ends the drag once and keeps the anchor", () => {
    const selection = new TokenSelection();
    selection.press({ doc: 0, token: 4 }, "add");
    assert.equal(selection.release(), true);
    assert.equal(selection.release(), false);
    assert.equal(selection.dragTo({ doc: 0, token: 6 }), null);
    assert.deepEqual(selection.anchor, { doc: 0, token: 4 });
  });

  test("shift-press extends from the last plain press, which stays the anchor", () => {
    const selection = new TokenSelection();
    selection.press({ doc: 0, token: 4 }, "add");
    selection.release();
    assert.deepEqual(selection.extendTo({ doc: 0, token: 9 }), { doc: 0, from: 4, to: 9 });
    assert.deepEqual(selection.extendTo({ doc: 0, token: 2 }), { doc: 0, from: 2, to: 4 });
    assert.deepEqual(selection.anchor, { doc: 0, token: 4 });
  });

  test("shift-press with no anchor, or one in another document, extends nothing", () => {
    const selection = new TokenSelection();
    assert.equal(selection.extendTo({ doc: 0, token: 3 }), null);
    selection.press({ doc: 1, token: 0 }, "add");
    assert.equal(selection.extendTo({ doc: 0, token: 3 }), null);
  });

  test("the cursor given is copied, not shared", () => {
    const start = { doc: 0, token: 0 };
    const selection = new TokenSelection(start);
    start.token = 5;
    assert.ok(selection.isCursor(0, 0));
  });
});

describe("runsUncovered", () => {
  test("a drag come back leaves the far end uncovered", () => {
    assert.deepEqual(runsUncovered({ doc: 0, from: 1, to: 6 }, { doc: 0, from: 1, to: 3 }), [{ doc: 0, from: 4, to: 6 }]);
  });

  test("a drag passing back over its start leaves the other side uncovered", () => {
    assert.deepEqual(runsUncovered({ doc: 0, from: 4, to: 8 }, { doc: 0, from: 2, to: 4 }), [{ doc: 0, from: 5, to: 8 }]);
  });

  test("a growing run uncovers nothing", () => {
    assert.deepEqual(runsUncovered({ doc: 0, from: 4, to: 5 }, { doc: 0, from: 4, to: 9 }), []);
  });
});

describe("dragStep", () => {
  test("covers exactly the run from the start to the pointer at every step", () => {
    const selection = new TokenSelection();
    selection.press({ doc: 0, token: 1 }, "add");
    assert.deepEqual(selection.dragStep({ doc: 0, token: 6 }), { run: { doc: 0, from: 1, to: 6 }, uncovered: [] });
    assert.deepEqual(selection.dragStep({ doc: 0, token: 3 }), {
      run: { doc: 0, from: 1, to: 3 },
      uncovered: [{ doc: 0, from: 4, to: 6 }],
    });
    assert.deepEqual(selection.dragStep({ doc: 0, token: 0 }), {
      run: { doc: 0, from: 0, to: 1 },
      uncovered: [{ doc: 0, from: 2, to: 3 }],
    });
  });

  test("answers null with no drag, or in another document", () => {
    const selection = new TokenSelection();
    assert.equal(selection.dragStep({ doc: 0, token: 2 }), null);
    selection.press({ doc: 0, token: 1 }, "add");
    assert.equal(selection.dragStep({ doc: 1, token: 2 }), null);
  });
});

describe("jumpFrom", () => {
  const starts = [[2, 9], [], [0, 5]];

  test("goes to the next place, on into the next documents", () => {
    assert.deepEqual(jumpFrom({ doc: 0, token: 2 }, 1, starts), { doc: 0, token: 9 });
    assert.deepEqual(jumpFrom({ doc: 0, token: 9 }, 1, starts), { doc: 2, token: 0 });
  });

  test("goes back to the previous place, on into the earlier documents", () => {
    assert.deepEqual(jumpFrom({ doc: 2, token: 3 }, -1, starts), { doc: 2, token: 0 });
    assert.deepEqual(jumpFrom({ doc: 2, token: 0 }, -1, starts), { doc: 0, token: 9 });
  });

  test("is null past the last place and before the first", () => {
    assert.equal(jumpFrom({ doc: 2, token: 5 }, 1, starts), null);
    assert.equal(jumpFrom({ doc: 0, token: 2 }, -1, starts), null);
  });
});
