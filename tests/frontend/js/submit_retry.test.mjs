// The frozen retry body of a submit: the same client_uuid and body on a retry, a new UUID for
// a changed answer, and a stored pending submit read back after a reload.
import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { pendingSubmitFromJson, submitToSend } from "../../../frontend/static/frontend/submit_retry.js";

const SPANS = [[{ docid: "d1", start_token: 0, end_token: 2 }]];

let issued = 0;

/** The annotator's answer at some moment; each new UUID differs from every other. */
function now(overrides = {}) {
  return {
    sets: structuredClone(SPANS),
    picking: false,
    label: null,
    clientUuid: "uuid-first",
    timeSpentMs: 1000,
    newUuid: () => `uuid-new-${(issued += 1)}`,
    ...overrides,
  };
}

describe("submitToSend", () => {
  test("a first submit is sent under the workspace's UUID", () => {
    const sent = submitToSend(null, now());
    assert.deepEqual(sent.body, { client_uuid: "uuid-first", rationale_sets: SPANS, time_spent_ms: 1000 });
  });

  test("a retry of the same answer sends the very same body, time included", () => {
    const first = submitToSend(null, now());
    const retry = submitToSend(first, now({ timeSpentMs: 9000, clientUuid: "uuid-other" }));
    assert.equal(retry, first);
    assert.deepEqual(retry.body, { client_uuid: "uuid-first", rationale_sets: SPANS, time_spent_ms: 1000 });
  });

  test("the frozen body stays as it was after the caller edits its sets", () => {
    const answer = now();
    const first = submitToSend(null, answer);
    answer.sets[0][0].end_token = 5;
    answer.sets.push([{ docid: "d2", start_token: 1, end_token: 2 }]);
    assert.deepEqual(first.body.rationale_sets, SPANS);
    assert.equal(submitToSend(first, now()), first);
  });

  test("a changed selection is a new submit under a new UUID", () => {
    const first = submitToSend(null, now());
    const changed = submitToSend(first, now({ sets: [[{ docid: "d1", start_token: 0, end_token: 3 }]], timeSpentMs: 4000 }));
    assert.notEqual(changed, first);
    assert.match(changed.body.client_uuid, /^uuid-new-\d+$/);
    assert.equal(changed.body.time_spent_ms, 4000);
    assert.deepEqual(first.body.client_uuid, "uuid-first");
  });

  test("changing back to the first answer after a new submit is new again, not the first", () => {
    const first = submitToSend(null, now());
    const changed = submitToSend(first, now({ sets: [] }));
    const back = submitToSend(changed, now());
    assert.notEqual(back.body.client_uuid, first.body.client_uuid);
    assert.notEqual(back.body.client_uuid, changed.body.client_uuid);
  });

  test("a label the annotator gives is sent, and changing it is a new submit", () => {
    const first = submitToSend(null, now({ picking: true, label: "pos" }));
    assert.equal(first.body.label, "pos");
    assert.equal(submitToSend(first, now({ picking: true, label: "pos" })), first);
    const relabelled = submitToSend(first, now({ picking: true, label: "neg" }));
    assert.equal(relabelled.body.label, "neg");
    assert.notEqual(relabelled.body.client_uuid, first.body.client_uuid);
  });

  test("where the gold label is shown, no label is sent and the workspace's label is not the answer", () => {
    const first = submitToSend(null, now({ picking: false, label: "pos" }));
    assert.ok(!("label" in first.body));
    assert.equal(submitToSend(first, now({ picking: false, label: "neg" })), first);
  });

  test("empty sets are an answer like any other", () => {
    const first = submitToSend(null, now({ sets: [] }));
    assert.deepEqual(first.body.rationale_sets, []);
    assert.equal(submitToSend(first, now({ sets: [] })), first);
  });
});

describe("pendingSubmitFromJson", () => {
  test("reads back what was stored", () => {
    const stored = submitToSend(null, now());
    assert.deepEqual(pendingSubmitFromJson(JSON.stringify(stored)), stored);
  });

  test("nothing stored, or not JSON, is no pending submit", () => {
    assert.equal(pendingSubmitFromJson(null), null);
    assert.equal(pendingSubmitFromJson(""), null);
    assert.equal(pendingSubmitFromJson("{not json"), null);
  });

  test("JSON of another shape is no pending submit", () => {
    for (const text of ["null", "3", "[]", '{"choice": "x"}', '{"choice": 1, "body": {"client_uuid": "u"}}',
      '{"choice": "x", "body": null}', '{"choice": "x", "body": {"client_uuid": 7}}']) {
      assert.equal(pendingSubmitFromJson(text), null, text);
    }
  });
});
