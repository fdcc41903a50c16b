// @ts-check
// The body of a submit that got no answer (or a refusal), frozen at its first attempt: a
// retry sends exactly that body, so that the server, which keys a submit by its client
// UUID, stores it once and answers a replay instead of a conflict. A changed answer is a new
// submit under a new UUID, since the old UUID may already be stored with the old answer.
// Plain data only (no DOM, no window), so that `node --test` checks it.

/** @typedef {import("./rationale_sets.js").TokenSpan} TokenSpan */
/** @typedef {{client_uuid: string, rationale_sets: TokenSpan[][], time_spent_ms: number,
 *   label?: string|null, suggestions_accepted?: {docid: string, token: number}[]}} SubmitBody */
/** `choice` is what the annotator chose (their sets, and their label when they give one),
 * to tell a retry from a changed answer.
 * @typedef {{choice: string, body: SubmitBody}} PendingSubmit */

/** @param {TokenSpan[][]} sets @param {boolean} picking @param {string|null} label
 * @param {{docid: string, token: number}[]|undefined} accepted */
function choiceOf(sets, picking, label, accepted) {
  return JSON.stringify(accepted ? [sets, picking ? label : null, accepted] : [sets, picking ? label : null]);
}

/** The submit to send now: the pending one, body and all, while the choice is the one it
 * froze; else a new one, under `clientUuid` for a first submit and under a new UUID when it
 * replaces a pending one. The caller keeps the answer as the new pending submit.
 * @param {PendingSubmit|null} pending
 * @param {{sets: TokenSpan[][], picking: boolean, label: string|null, clientUuid: string,
 *   timeSpentMs: number, newUuid: () => string, accepted?: {docid: string, token: number}[]}} now
 *   `picking`: whether the annotator gives the label (then `label` is sent); `accepted`:
 *   the model suggestions accepted, under a variant that shows them (then they are sent)
 * @returns {PendingSubmit} */
export function submitToSend(pending, now) {
  const choice = choiceOf(now.sets, now.picking, now.label, now.accepted);
  if (pending && pending.choice === choice) return pending;
  /** @type {SubmitBody} */
  const body = {
    client_uuid: pending ? now.newUuid() : now.clientUuid,
    // A copy, so that the caller's later edits cannot reach the frozen body.
    rationale_sets: structuredClone(now.sets),
    time_spent_ms: now.timeSpentMs,
    ...(now.picking ? { label: now.label } : {}),
    ...(now.accepted ? { suggestions_accepted: structuredClone(now.accepted) } : {}),
  };
  return { choice, body };
}

/** A pending submit as stored (JSON) before a reload, or null when the text is not one.
 * @param {string|null} text @returns {PendingSubmit|null} */
export function pendingSubmitFromJson(text) {
  /** @type {any} */ let stored;
  try {
    stored = JSON.parse(text || "null");
  } catch (_) {
    return null;
  }
  const valid = stored !== null && typeof stored === "object" && typeof stored.choice === "string"
    && stored.body !== null && typeof stored.body === "object" && typeof stored.body.client_uuid === "string";
  return valid ? stored : null;
}
