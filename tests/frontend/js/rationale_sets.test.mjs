// The annotator's rationale sets: adding, removing and toggling tokens, numbering the sets,
// how a token is marked, and the spans a submit sends.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { RationaleSets, runStarts, tokensDiffering } from "../../../frontend/static/frontend/rationale_sets.js";

describe("a new RationaleSets", () => {
  test("has one empty set, current, and no spans", () => {
    const rationale = new RationaleSets();
    assert.equal(rationale.count, 1);
    assert.equal(rationale.current, 0);
    assert.equal(rationale.totalTokens(), 0);
    assert.deepEqual(rationale.toEntries(), [[]]);
    assert.deepEqual(rationale.spans(), []);
  });
});

describe("applyRun", () => {
  test("adds a run given either way round", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 5, 3, "add");
    assert.deepEqual(rationale.toEntries(), [[["d1", [3, 4, 5]]]]);
  });

  test("removes part of a run", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 5, "add");
    rationale.applyRun("d1", 2, 3, "remove");
    assert.deepEqual(rationale.toEntries(), [[["d1", [0, 1, 4, 5]]]]);
  });

  test("a document left with no token leaves the set", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 1, 2, "add");
    rationale.applyRun("d1", 1, 2, "remove");
    assert.deepEqual(rationale.toEntries(), [[]]);
  });

  test("removing from an empty set leaves it empty", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 3, "remove");
    assert.deepEqual(rationale.toEntries(), [[]]);
    assert.equal(rationale.highlightedIn("d1"), 0);
  });

  test("changes only the current set", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 1, "add");
    rationale.startNew();
    rationale.applyRun("d1", 1, 2, "add");
    assert.deepEqual(rationale.toEntries(), [[["d1", [0, 1]]], [["d1", [1, 2]]]]);
  });
});

describe("toggle", () => {
  test("highlights a token, then clears it, and says which it did", () => {
    const rationale = new RationaleSets();
    assert.equal(rationale.toggle("d1", 4), "add");
    assert.ok(rationale.has("d1", 4));
    assert.equal(rationale.toggle("d1", 4), "remove");
    assert.ok(!rationale.has("d1", 4));
    assert.deepEqual(rationale.toEntries(), [[]]);
  });
});

describe("startNew and choose", () => {
  test("a new set follows a non-empty one and becomes current", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 0, "add");
    assert.equal(rationale.startNew(), true);
    assert.equal(rationale.count, 2);
    assert.equal(rationale.current, 1);
  });

  test("no new set follows an empty last set, which becomes current", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 0, "add");
    rationale.startNew();
    rationale.choose(0);
    assert.equal(rationale.startNew(), false);
    assert.equal(rationale.count, 2);
    assert.equal(rationale.current, 1);
  });

  test("choosing a set that does not exist changes nothing", () => {
    const rationale = new RationaleSets();
    for (const index of [1, -1, 0.5, Number.NaN]) {
      assert.equal(rationale.choose(index), false, String(index));
      assert.equal(rationale.current, 0);
    }
  });
});

describe("clearing", () => {
  test("clearCurrent empties the current set and keeps the others and the numbering", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 1, "add");
    rationale.startNew();
    rationale.applyRun("d1", 5, 6, "add");
    rationale.clearCurrent();
    assert.deepEqual(rationale.toEntries(), [[["d1", [0, 1]]], []]);
    assert.equal(rationale.current, 1);
  });

  test("clearAll leaves one empty set, current", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 1, "add");
    rationale.startNew();
    rationale.applyRun("d2", 0, 0, "add");
    rationale.clearAll();
    assert.deepEqual(rationale.toEntries(), [[]]);
    assert.equal(rationale.current, 0);
  });
});

describe("counting", () => {
  test("tokens are counted per set, over all sets, and once per document", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 2, "add");
    rationale.applyRun("d2", 0, 0, "add");
    rationale.startNew();
    rationale.applyRun("d1", 2, 3, "add");
    assert.equal(rationale.tokenCount(0), 4);
    assert.equal(rationale.tokenCount(1), 2);
    assert.equal(rationale.totalTokens(), 6);
    assert.equal(rationale.highlightedIn("d1"), 4);
    assert.equal(rationale.highlightedIn("d2"), 1);
    assert.equal(rationale.highlightedIn("nowhere"), 0);
  });
});

describe("marksOf", () => {
  const rationale = new RationaleSets();
  rationale.applyRun("d1", 2, 4, "add");
  rationale.startNew();
  rationale.applyRun("d1", 4, 5, "add");

  test("an unmarked token is in no set", () => {
    assert.deepEqual(rationale.marksOf("d1", 0), { first: -1, count: 0, runStart: false });
  });

  test("a run's first token begins it; the next does not", () => {
    assert.deepEqual(rationale.marksOf("d1", 2), { first: 0, count: 1, runStart: true });
    assert.deepEqual(rationale.marksOf("d1", 3), { first: 0, count: 1, runStart: false });
  });

  test("a token in two sets shows the first and counts both", () => {
    assert.deepEqual(rationale.marksOf("d1", 4), { first: 0, count: 2, runStart: false });
  });

  test("a token of a later set begins a run where that set's previous token is absent", () => {
    assert.deepEqual(rationale.marksOf("d1", 5), { first: 1, count: 1, runStart: false });
  });

  test("token 0 begins a run", () => {
    const first = new RationaleSets();
    first.applyRun("d1", 0, 1, "add");
    assert.deepEqual(first.marksOf("d1", 0), { first: 0, count: 1, runStart: true });
  });
});

describe("spans", () => {
  test("joins consecutive tokens, per document in the order first highlighted", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d2", 7, 7, "add");
    rationale.applyRun("d1", 0, 1, "add");
    rationale.applyRun("d1", 3, 3, "add");
    rationale.applyRun("d2", 8, 8, "add");
    assert.deepEqual(rationale.spans(), [[
      { docid: "d2", start_token: 7, end_token: 9 },
      { docid: "d1", start_token: 0, end_token: 2 },
      { docid: "d1", start_token: 3, end_token: 4 },
    ]]);
  });

  test("leaves out empty sets, so the submit's set numbers close up", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 0, 0, "add");
    rationale.startNew();
    rationale.startNew();
    rationale.applyRun("d1", 0, 0, "add");
    rationale.startNew();
    rationale.choose(1);
    rationale.clearCurrent();
    assert.equal(rationale.count, 3);
    assert.deepEqual(rationale.spans(), [
      [{ docid: "d1", start_token: 0, end_token: 1 }],
    ]);
  });
});

describe("fromEntries", () => {
  test("round-trips toEntries, tokens in ascending order", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 9, 9, "add");
    rationale.applyRun("d1", 2, 3, "add");
    rationale.startNew();
    rationale.applyRun("d2", 0, 0, "add");
    const entries = rationale.toEntries();
    assert.deepEqual(entries, [[["d1", [2, 3, 9]]], [["d2", [0]]]]);
    const back = RationaleSets.fromEntries(entries, 1);
    assert.deepEqual(back.toEntries(), entries);
    assert.equal(back.current, 1);
  });

  test("no sets become one empty set", () => {
    const rationale = RationaleSets.fromEntries([], 3);
    assert.deepEqual(rationale.toEntries(), [[]]);
    assert.equal(rationale.current, 0);
  });

  test("the current set is kept within the sets", () => {
    assert.equal(RationaleSets.fromEntries([[], []], 5).current, 1);
    assert.equal(RationaleSets.fromEntries([[], []], -2).current, 0);
    assert.equal(RationaleSets.fromEntries([[], []], Number.NaN).current, 0);
  });

  test("later edits do not reach the entries it was made from", () => {
    const entries = [[["d1", [1]]]];
    const rationale = RationaleSets.fromEntries(/** @type {any} */ (entries));
    rationale.applyRun("d1", 2, 2, "add");
    assert.deepEqual(entries, [[["d1", [1]]]]);
  });
});

describe("tokensDiffering", () => {
  test("names the tokens some set gained or lost, and the token after each", () => {
    const before = [[["d1", [1, 2, 3]]], [["d2", [0]]]];
    const after = [[["d1", [1, 2]]], [["d2", [0]], ["d1", [7]]]];
    const changed = tokensDiffering(before, after);
    assert.deepEqual([...changed.keys()], ["d1"]);
    assert.deepEqual([...changed.get("d1")].sort((a, b) => a - b), [3, 4, 7, 8]);
  });

  test("is empty when nothing changed, however many tokens are highlighted", () => {
    const sets = [[["d1", Array.from({ length: 5000 }, (_, i) => i)]]];
    assert.equal(tokensDiffering(sets, structuredClone(sets)).size, 0);
  });

  test("counts a set that is gone as every token of it lost", () => {
    const changed = tokensDiffering([[], [["d1", [4]]]], [[]]);
    assert.deepEqual([...changed.get("d1")], [4, 5]);
  });
});

describe("runStarts", () => {
  test("gives each run's first token over every set, or over one", () => {
    const entries = [[["d1", [2, 3, 4, 9]]], [["d1", [3, 12, 13]]]];
    assert.deepEqual(runStarts(entries, "d1"), [2, 3, 9, 12]);
    assert.deepEqual(runStarts(entries, "d1", 1), [3, 12]);
    assert.deepEqual(runStarts(entries, "d2"), []);
  });
});
