// Model suggestions in the workspace: accepted one by one or all at once, sent only while
// still highlighted, and part of the submit's body only where suggestions were shown.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { submitToSend } from "../../../frontend/static/frontend/submit_retry.js";
import { Suggestions } from "../../../frontend/static/frontend/suggestions.js";

const PAIRS = [["d1", 5], ["d1", 6], ["d2", 0]];

describe("Suggestions", () => {
  test("only a suggested token can be accepted", () => {
    const s = new Suggestions(PAIRS);
    assert.equal(s.accept("d1", 5), true);
    assert.equal(s.accept("d1", 7), false);
    assert.equal(s.isAccepted("d1", 5), true);
    assert.equal(s.isAccepted("d1", 7), false);
  });

  test("an accepted token is sent only while it is highlighted", () => {
    const s = new Suggestions(PAIRS);
    s.accept("d1", 5);
    s.accept("d2", 0);
    const highlighted = new Set(["d1:5"]);
    assert.deepEqual(s.acceptedIn((docid, token) => highlighted.has(`${docid}:${token}`)), [{ docid: "d1", token: 5 }]);
  });

  test("accept all marks every suggestion and gives them to highlight", () => {
    const s = new Suggestions(PAIRS);
    assert.deepEqual(s.acceptAll().map((t) => [t.docid, t.token]), PAIRS);
    assert.equal(s.acceptedIn(() => true).length, 3);
  });

  test("nothing is accepted until the annotator accepts", () => {
    assert.deepEqual(new Suggestions(PAIRS).acceptedIn(() => true), []);
  });
});

describe("the submit's body", () => {
  const now = (accepted) => ({
    sets: [[{ docid: "d1", start_token: 5, end_token: 6 }]],
    picking: false,
    label: null,
    clientUuid: "u1",
    timeSpentMs: 10,
    newUuid: () => "u2",
    accepted,
  });

  test("carries the accepted suggestions where they were shown", () => {
    const sent = submitToSend(null, now([{ docid: "d1", token: 5 }]));
    assert.deepEqual(sent.body.suggestions_accepted, [{ docid: "d1", token: 5 }]);
  });

  test("has no such field where none were shown", () => {
    assert.equal("suggestions_accepted" in submitToSend(null, now(undefined)).body, false);
  });

  test("a change of what is accepted is a new submit", () => {
    const first = submitToSend(null, now([]));
    const second = submitToSend(first, now([{ docid: "d1", token: 5 }]));
    assert.notEqual(second.body.client_uuid, first.body.client_uuid);
  });
});
