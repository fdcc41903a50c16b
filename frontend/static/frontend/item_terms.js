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

/** The quality flags by their API names, as the pipeline page names them. */
export const FLAG_NAMES = /** @type {Record<string, string>} */ ({
  empty: pgettext("quality flag", "empty"),
  too_fast: pgettext("quality flag", "too fast"),
  stopwords: pgettext("quality flag", "stopwords"),
  first_tokens: pgettext("quality flag", "first tokens"),
  low_agreement: pgettext("quality flag", "low agreement"),
});

/** @param {string} kind */
export function flagName(kind) {
  return FLAG_NAMES[kind] ?? kind;
}
