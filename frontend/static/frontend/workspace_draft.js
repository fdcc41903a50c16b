// @ts-check
// A draft: the work on an item so far, as the server and the browser's localStorage keep it
// between visits. Plain data only (no DOM, no window), so that `node --test` checks it.

/** @typedef {import("./rationale_sets.js").SetEntries} SetEntries */
/** @typedef {import("./rationale_sets.js").RationaleSets} RationaleSets */
/** As stored: what the annotator did, the UUID their submit will carry (kept across a
 * reload, so that a retried submit is the same submit), the time spent so far and, where
 * the item came with model suggestions, the ones accepted ([docid, token] pairs).
 * @typedef {{sets: SetEntries[], current: number, label: string|null, client_uuid: string,
 *   elapsed_ms: number, accepted?: [string, number][]}} Draft */
/** A draft as read back: a field the draft lacks (or holds wrongly) is null and the
 * workspace keeps its own value.
 * @typedef {{sets: SetEntries[], current: number, label: string|null, clientUuid: string|null,
 *   elapsedMs: number|null, accepted: [string, number][]|null}} DraftRead */

/** @param {{rationale: RationaleSets, label: string|null, clientUuid: string, elapsedMs: number,
 *   accepted?: [string, number][]}} work
 * @returns {Draft} */
export function draftOf(work) {
  /** @type {Draft} */
  const draft = {
    sets: work.rationale.toEntries(),
    current: work.rationale.current,
    label: work.label,
    client_uuid: work.clientUuid,
    elapsed_ms: work.elapsedMs,
  };
  if (work.accepted) draft.accepted = work.accepted;
  return draft;
}

/** @param {any} pairs @returns {pairs is [string, number][]} */
function isTokenPairs(pairs) {
  return Array.isArray(pairs) && pairs.every((pair) => Array.isArray(pair) && pair.length === 2
    && typeof pair[0] === "string" && Number.isInteger(pair[1]) && pair[1] >= 0);
}

/** @param {any} set @returns {set is SetEntries} */
function isSetEntries(set) {
  return Array.isArray(set) && set.every((entry) => Array.isArray(entry) && entry.length === 2
    && typeof entry[0] === "string" && Array.isArray(entry[1])
    && entry[1].every((/** @type {any} */ token) => Number.isInteger(token) && token >= 0));
}

/** A stored draft read back, or null when `value` is none: not an object, or sets that are
 * not lists of [docid, token indexes] (a draft written by something else is ignored whole
 * rather than half-restored).
 * @param {any} value @returns {DraftRead|null} */
export function draftRead(value) {
  if (!value || typeof value !== "object" || !Array.isArray(value.sets) || !value.sets.every(isSetEntries)) {
    return null;
  }
  return {
    sets: value.sets,
    current: Number.isInteger(value.current) ? value.current : 0,
    label: typeof value.label === "string" ? value.label : null,
    clientUuid: typeof value.client_uuid === "string" ? value.client_uuid : null,
    elapsedMs: typeof value.elapsed_ms === "number" ? value.elapsed_ms : null,
    accepted: isTokenPairs(value.accepted) ? value.accepted : null,
  };
}
