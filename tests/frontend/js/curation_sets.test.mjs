// The curator's set operations: union, intersection, tokens at least k annotators marked,
// how many marked each token, and the round trip through RationaleSets entries.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  annotationTokens,
  fromEntries,
  intersectionOf,
  markCounts,
  markedByAtLeast,
  setSize,
  toEntries,
  unionOf,
} from "../../../frontend/static/frontend/curation_sets.js";
import { RationaleSets } from "../../../frontend/static/frontend/rationale_sets.js";

const A = { d0: [0, 1, 2], d1: [4] };
const B = { d0: [1, 2, 3] };
const C = { d0: [2, 9], d1: [4, 5] };

describe("union and intersection", () => {
  test("the union holds every token of any set, sorted", () => {
    assert.deepEqual(unionOf([A, B, C]), { d0: [0, 1, 2, 3, 9], d1: [4, 5] });
  });

  test("the intersection holds the tokens of every set, documents nobody shares left out", () => {
    assert.deepEqual(intersectionOf([A, B, C]), { d0: [2] });
    assert.deepEqual(intersectionOf([A, C]), { d0: [2], d1: [4] });
  });

  test("of no set is empty; of one set is that set", () => {
    assert.deepEqual(unionOf([]), {});
    assert.deepEqual(intersectionOf([]), {});
    assert.deepEqual(intersectionOf([A]), A);
  });

  test("the intersection lies in every set and every set in the union", () => {
    const sets = [A, B, C];
    const inner = intersectionOf(sets);
    const outer = unionOf(sets);
    for (const set of sets) {
      for (const [docid, tokens] of Object.entries(inner)) {
        for (const t of tokens) assert.ok((set[docid] || []).includes(t));
      }
      for (const [docid, tokens] of Object.entries(set)) {
        for (const t of tokens) assert.ok(outer[docid].includes(t));
      }
    }
  });
});

describe("tokens marked by at least k annotators", () => {
  // Three annotations; the second has two sets, which count as one annotator.
  const annotations = [[A], [B, { d0: [1] }], [C]];

  test("counts each annotator once, whatever sets hold the token", () => {
    assert.deepEqual(markCounts(annotations), { d0: { 0: 1, 1: 2, 2: 3, 3: 1, 9: 1 }, d1: { 4: 2, 5: 1 } });
  });

  test("k = 1 is the union, k = all is the intersection, k = 2 the majority", () => {
    const tokens = annotations.map(annotationTokens);
    assert.deepEqual(markedByAtLeast(annotations, 1), unionOf(tokens));
    assert.deepEqual(markedByAtLeast(annotations, 3), intersectionOf(tokens));
    assert.deepEqual(markedByAtLeast(annotations, 2), { d0: [1, 2], d1: [4] });
    assert.deepEqual(markedByAtLeast(annotations, 0), unionOf(tokens));
    assert.deepEqual(markedByAtLeast(annotations, 4), {});
  });
});

describe("sizes and entries", () => {
  test("a set's size counts tokens over its documents", () => {
    assert.equal(setSize(A), 4);
    assert.equal(setSize({}), 0);
  });

  test("entries follow the item's document order and load into RationaleSets", () => {
    const entries = toEntries({ d1: [4], d0: [1, 0] }, ["d0", "d1"]);
    assert.deepEqual(entries, [["d0", [1, 0]], ["d1", [4]]]);
    const sets = RationaleSets.fromEntries([entries]);
    assert.deepEqual(sets.spans(), [[{ docid: "d0", start_token: 0, end_token: 2 }, { docid: "d1", start_token: 4, end_token: 5 }]]);
    assert.deepEqual(fromEntries(sets.toEntries()[0]), { d0: [0, 1], d1: [4] });
  });
});
