// @ts-check
// The automatic quality flags in words (qc FlagKind's values as the API sends them), for
// every page that shows them: the quality page, the agreement dashboard, the data manager
// and curation. A kind this file does not know is shown as its own name.

/** Flag kinds by their API names. */
export const FLAG_NAMES = /** @type {Record<string, string>} */ ({
  empty: pgettext("quality flag", "empty"),
  too_fast: pgettext("quality flag", "too fast"),
  stopwords: pgettext("quality flag", "stopwords"),
  first_tokens: pgettext("quality flag", "first tokens"),
  low_agreement: pgettext("quality flag", "low agreement"),
});

/** A flag kind in words. @param {string} kind @returns {string} */
export function flagName(kind) {
  return FLAG_NAMES[kind] ?? kind;
}

/** Counts per flag kind as one line of words: "too fast 2, low agreement 1".
 * @param {Record<string, number>} counts @returns {string} */
export function flagCounts(counts) {
  return Object.entries(counts).map(([kind, n]) => `${flagName(kind)} ${n}`).join(gettext(", "));
}
