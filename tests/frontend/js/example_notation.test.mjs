// A variant's example as an editable line ("The [acting] was [superb] .") and back.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { exampleFromNotation, exampleToNotation } from "../../../frontend/static/frontend/example_notation.js";

describe("exampleToNotation", () => {
  test("brackets the highlighted tokens", () => {
    const line = exampleToNotation({ tokens: ["The", "acting", "was", "superb", "."], highlighted: [1, 3] });
    assert.equal(line, "The [acting] was [superb] .");
  });
});

describe("exampleFromNotation", () => {
  test("reads tokens and highlights back", () => {
    assert.deepEqual(exampleFromNotation("The [acting] was [superb] ."), {
      tokens: ["The", "acting", "was", "superb", "."],
      highlighted: [1, 3],
    });
  });

  test("extra spaces do not make empty tokens", () => {
    assert.deepEqual(exampleFromNotation("  a   [b]  "), { tokens: ["a", "b"], highlighted: [1] });
  });

  test("a lone bracket or one inside a token stays text", () => {
    assert.deepEqual(exampleFromNotation("[ x a[1] ]"), { tokens: ["[", "x", "a[1]", "]"], highlighted: [] });
  });

  test("round trips any example whose tokens have no spaces", () => {
    const example = { tokens: ["好", "看", "[", "!"], highlighted: [0, 3] };
    assert.deepEqual(exampleFromNotation(exampleToNotation(example)), example);
  });
});
