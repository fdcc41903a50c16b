// The datasheet's Markdown read into blocks drawn with text nodes only: each construct the
// datasheet writes, and text that looks like HTML kept as text.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { inlineRuns, markdownBlocks, tableCells } from "../../../frontend/static/frontend/markdown_blocks.js";

describe("markdownBlocks", () => {
  test("reads headings, paragraphs, lists and quotes in order", () => {
    const text = "# Datasheet: P\n\nA film project\nin two lines.\n\n## Task\n- task: x\n- labels: a, b\n\n> said\n>\n> again\n";
    assert.deepEqual(markdownBlocks(text), [
      { kind: "heading", level: 1, text: "Datasheet: P" },
      { kind: "paragraph", text: "A film project in two lines." },
      { kind: "heading", level: 2, text: "Task" },
      { kind: "list", items: ["task: x", "labels: a, b"] },
      { kind: "quote", lines: ["said", "", "again"] },
    ]);
  });

  test("reads a table with an escaped pipe in a cell", () => {
    const text = "| column | value |\n|---|---|\n| platform | MTurk \\| Prolific |\n| pay | 0.60 |\n";
    assert.deepEqual(markdownBlocks(text), [
      { kind: "table", head: ["column", "value"], rows: [["platform", "MTurk | Prolific"], ["pay", "0.60"]] },
    ]);
  });

  test("keeps text that looks like HTML as text", () => {
    const [block] = markdownBlocks("<script>alert(1)</script> and <b>bold</b>");
    assert.deepEqual(block, { kind: "paragraph", text: "<script>alert(1)</script> and <b>bold</b>" });
  });

  test("a line starting with a pipe but no separator after it is a paragraph", () => {
    assert.deepEqual(markdownBlocks("| not a table"), [{ kind: "paragraph", text: "| not a table" }]);
  });
});

describe("inlineRuns", () => {
  test("splits code spans from text", () => {
    assert.deepEqual(inlineRuns("params `{\"a\": 1}` here"), [["params ", false], ['{"a": 1}', true], [" here", false]]);
  });

  test("an unmatched backtick stays text", () => {
    assert.deepEqual(inlineRuns("a ` b"), [["a ` b", false]]);
  });
});

describe("tableCells", () => {
  test("trims the cells and drops the outer pipes", () => {
    assert.deepEqual(tableCells("|  a |b|"), ["a", "b"]);
  });
});
