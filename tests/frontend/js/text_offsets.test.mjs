// The server's code-point offsets read as JavaScript string offsets.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { codeUnitsOf } from "../../../frontend/static/frontend/text_offsets.js";

describe("codeUnitsOf", () => {
  test("is the identity for a text within the first plane", () => {
    const units = codeUnitsOf("café مرحبا 我");
    assert.deepEqual([0, 4, 11].map(units), [0, 4, 11]);
  });

  test("counts an emoji as the two units it takes", () => {
    const text = "a 👩\u200d👧 b";
    const units = codeUnitsOf(text);
    // Code points: a, space, woman, ZWJ, girl, space, b.
    assert.equal(text.slice(units(2), units(5)), "👩\u200d👧");
    assert.equal(text.slice(units(6), units(7)), "b");
  });
});
