// @ts-check
// The data manager's words for an item's state, in the reader's language: its place in the
// workflow (qc/item_status.py) and its annotations' quality flags (qc.models.FlagKind), as
// the table's columns and filters and the item page name them.

/** @type {Array<{key: string, name: string}>} */
export const ITEM_STATUSES = [
  { key: "waiting", name: gettext("waiting") },
  { key: "in_progress", name: gettext("in progress") },
  { key: "complete", name: gettext("complete") },
  { key: "in_review", name: gettext("in review") },
  { key: "revising", name: gettext("revising") },
  { key: "accepted", name: gettext("accepted") },
  { key: "discarded", name: gettext("discarded") },
  { key: "gold", name: gettext("gold") },
  { key: "excluded", name: gettext("excluded") },
];

/** @param {string} key */
export function statusName(key) {
  return ITEM_STATUSES.find((s) => s.key === key)?.name ?? key;
}

// The quality flags in words: the one list every page uses.
export { FLAG_NAMES, flagName } from "./flag_names.js";
