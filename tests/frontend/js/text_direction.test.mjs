// Right-to-left runs inside left-to-right text: which tokens the workspace isolates together.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { rightToLeftRuns, tokenDirection } from "../../../frontend/static/frontend/text_direction.js";

/** @param {string} text */
function tokensOf(text) {
  return [...text.matchAll(/\S+/g)].map((m) => [m.index, m.index + m[0].length]);
}

describe("tokenDirection", () => {
  test("goes by the first letter", () => {
    assert.equal(tokenDirection("مرحبا"), "rtl");
    assert.equal(tokenDirection("שלום"), "rtl");
    assert.equal(tokenDirection("film"), "ltr");
    assert.equal(tokenDirection("12,5"), "neutral");
    assert.equal(tokenDirection("👋🏽"), "neutral");
  });
});

describe("rightToLeftRuns", () => {
  test("holds the right-to-left words and what lies between two of them", () => {
    const text = "he said مرحبا , بالعالم today";
    assert.deepEqual(rightToLeftRuns(text, tokensOf(text)), [false, false, true, true, true, false]);
  });

  test("leaves a neutral token at a run's edge outside it", () => {
    const text = "שלום . then";
    assert.deepEqual(rightToLeftRuns(text, tokensOf(text)), [true, false, false]);
  });

  test("does not carry a run across a line break", () => {
    const text = "שלום 12\nשלום";
    assert.deepEqual(rightToLeftRuns(text, tokensOf(text)), [true, false, true]);
  });
});
