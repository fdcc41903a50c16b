// The item page's plain data: tokens by set, the rows every annotation shares, what a
// revision changed, and how the agreement strip shades and counts tokens.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  agreementCounts,
  highlightedTokens,
  latestRounds,
  revisionDiff,
  setsByToken,
  shareStep,
  tokenRows,
} from "../../../frontend/static/frontend/item_rows.js";

const span = (docid, start_token, end_token) => ({ docid, start_token, end_token });

describe("setsByToken", () => {
  test("names the first set holding each token, in set order whatever the list order", () => {
    const found = setsByToken([
      { position: 1, spans: [span("d", 2, 4)] },
      { position: 0, spans: [span("d", 0, 3), span("q", 1, 2)] },
    ]);
    assert.deepEqual([...found.get("d")].sort((a, b) => a[0] - b[0]), [[0, 0], [1, 0], [2, 0], [3, 1]]);
    assert.deepEqual([...found.get("q")], [[1, 0]]);
  });

  test("highlightedTokens is their union per document", () => {
    const found = highlightedTokens([{ position: 0, spans: [span("d", 0, 2)] }, { position: 1, spans: [span("d", 1, 3)] }]);
    assert.deepEqual([...found.get("d")].sort(), [0, 1, 2]);
  });
});

describe("tokenRows", () => {
  test("follows the sentences and cuts a long one", () => {
    assert.deepEqual(tokenRows(10, [[0, 3], [3, 10]], 4), [[0, 3], [3, 7], [7, 10]]);
  });

  test("covers tokens the sentences leave out, once and in order", () => {
    assert.deepEqual(tokenRows(9, [[2, 4], [3, 6]], 40), [[0, 2], [2, 4], [4, 6], [6, 9]]);
  });

  test("cuts a document without sentences every limit tokens", () => {
    const rows = tokenRows(5000, [], 40);
    assert.equal(rows.length, 125);
    assert.deepEqual(rows[124], [4960, 5000]);
  });

  test("ignores sentences past the document's end", () => {
    assert.deepEqual(tokenRows(3, [[0, 2], [2, 8], [8, 9]], 40), [[0, 2], [2, 3]]);
  });
});

describe("revisionDiff", () => {
  test("lists the tokens added and removed per document, and nothing for an unchanged one", () => {
    const before = [{ position: 0, spans: [span("d", 0, 3), span("q", 0, 1)] }];
    const after = [{ position: 0, spans: [span("d", 1, 5)] }, { position: 1, spans: [span("q", 0, 1)] }];
    assert.deepEqual(Object.fromEntries(revisionDiff(before, after)), { d: { added: [3, 4], removed: [0] } });
  });
});

describe("the agreement strip", () => {
  test("shades none, some and all apart", () => {
    assert.deepEqual([0, 0.1, 0.25, 0.5, 0.75, 0.99, 1].map((s) => shareStep(s)), [0, 1, 1, 2, 3, 4, 5]);
  });

  test("counts tokens all, some and none highlighted", () => {
    assert.deepEqual(agreementCounts([1, 0.5, 0, 0, 1 / 3]), { all: 1, some: 2, none: 2 });
  });

  test("latestRounds leaves out annotations a later round revises", () => {
    const rows = [{ id: 1, revision_of: null }, { id: 2, revision_of: 1 }, { id: 3, revision_of: null }];
    assert.deepEqual(latestRounds(rows).map((a) => a.id), [2, 3]);
  });
});
