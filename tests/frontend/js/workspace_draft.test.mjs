// Draft serialisation: what the workspace stores between visits, and how a stored draft is
// read back (a malformed one is ignored whole).
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { RationaleSets } from "../../../frontend/static/frontend/rationale_sets.js";
import { draftOf, draftRead } from "../../../frontend/static/frontend/workspace_draft.js";

describe("draftOf", () => {
  test("holds the sets as entries, the current set, the label, the UUID and the time", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d1", 3, 1, "add");
    rationale.startNew();
    const draft = draftOf({ rationale, label: "pos", clientUuid: "u-1", elapsedMs: 1234 });
    assert.deepEqual(draft, {
      sets: [[["d1", [1, 2, 3]]], []], current: 1, label: "pos", client_uuid: "u-1", elapsed_ms: 1234,
    });
  });

  test("an empty workspace is one empty set", () => {
    const draft = draftOf({ rationale: new RationaleSets(), label: null, clientUuid: "u", elapsedMs: 0 });
    assert.deepEqual(draft.sets, [[]]);
    assert.equal(draft.label, null);
  });
});

describe("draftRead", () => {
  test("reads back what draftOf wrote, through JSON", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d2", 0, 1, "add");
    const stored = JSON.parse(JSON.stringify(draftOf({ rationale, label: "neg", clientUuid: "u-2", elapsedMs: 50 })));
    assert.deepEqual(draftRead(stored), {
      sets: [[["d2", [0, 1]]]], current: 0, label: "neg", clientUuid: "u-2", elapsedMs: 50, accepted: null,
    });
  });

  test("keeps the model suggestions accepted, where the item came with some", () => {
    const rationale = new RationaleSets();
    rationale.applyRun("d2", 5, 5, "add");
    const written = draftOf({ rationale, label: null, clientUuid: "u", elapsedMs: 0, accepted: [["d2", 5]] });
    assert.deepEqual(written.accepted, [["d2", 5]]);
    assert.deepEqual(draftRead(JSON.parse(JSON.stringify(written)))?.accepted, [["d2", 5]]);
    assert.equal("accepted" in draftOf({ rationale, label: null, clientUuid: "u", elapsedMs: 0 }), false);
    for (const accepted of ["d2", [["d2"]], [[5, "d2"]], [["d2", -1]], [["d2", 1.5]]]) {
      assert.equal(draftRead({ sets: [], accepted })?.accepted, null, JSON.stringify(accepted));
    }
  });

  test("a missing or wrongly typed field is null, for the workspace to keep its own", () => {
    assert.deepEqual(draftRead({ sets: [] }),
      { sets: [], current: 0, label: null, clientUuid: null, elapsedMs: null, accepted: null });
    assert.deepEqual(draftRead({ sets: [], current: "1", label: 3, client_uuid: 4, elapsed_ms: "9" }),
      { sets: [], current: 0, label: null, clientUuid: null, elapsedMs: null, accepted: null });
  });

  test("no draft, or one without a list of sets, is none", () => {
    for (const value of [null, undefined, "", 0, "text", [], {}, { sets: "no" }, { sets: null }]) {
      assert.equal(draftRead(value), null, JSON.stringify(value));
    }
  });

  test("a set that is not [docid, token indexes] pairs makes the whole draft none", () => {
    for (const sets of [[5], [[["d1"]]], [[[1, [0]]]], [[["d1", "0"]]], [[["d1", [-1]]]], [[["d1", [0.5]]]],
      [[["d1", [0], "extra"]]]]) {
      assert.equal(draftRead({ sets }), null, JSON.stringify(sets));
    }
  });
});
