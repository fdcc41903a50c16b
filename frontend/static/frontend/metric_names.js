// @ts-check
// The results board's column headings: a score's key ("token_prf.instance_macro.f1") as words
// a reader knows ("Token F1 (macro)"), with a sentence defining the metric for its tooltip.
// The definitions follow docs/reference/metrics.md (plausibility, faithfulness, consistency),
// said briefly.

/** Groups of scores by the scorer's key: their name and what they compare. */
const GROUPS = /** @type {Record<string, {name: string, about: string}>} */ ({
  iou_scores: {
    name: gettext("IOU"),
    about: gettext("A predicted span counts as found when it shares at least the threshold's share of its tokens (overlap over union) with a human span."),
  },
  iou_scores_one_to_one: {
    name: gettext("IOU one-to-one"),
    about: gettext("As IOU, but each human span can match only one predicted span, so recall cannot exceed 1."),
  },
  token_prf: {
    name: gettext("Token"),
    about: gettext("Highlighted tokens compared one by one with the tokens people marked."),
  },
  rationale_prf: {
    name: gettext("Exact span"),
    about: gettext("A predicted span counts only when it equals a human span exactly."),
  },
  token_soft_metrics: {
    name: gettext("Token scores"),
    about: gettext("From the explainer's soft score per token, against the tokens people marked, averaged over documents."),
  },
  sentence_soft_metrics: {
    name: gettext("Sentence scores"),
    about: gettext("From the explainer's soft score per sentence, against the sentences holding human rationales, averaged over documents."),
  },
  rationale_set_token_f1: {
    name: gettext("Token F1 vs sets"),
    about: gettext("Token F1 against the best-matching union of each item's rationale sets (the fine-grained benchmark's measure)."),
  },
  soft_top_k: {
    name: gettext("Top-k"),
    about: gettext("The soft scores cut to the k highest tokens, then compared with the tokens people marked."),
  },
  aopc_paper_formula: {
    name: gettext("Paper formula"),
    about: gettext("AOPC as the ERASER paper writes it: with a zero term for an empty rationale, so a little smaller than the reference scorer's figure."),
  },
  greedy_union: {
    name: gettext("greedy union"),
    about: gettext("The gold is the union of rationale sets that best matches the prediction."),
  },
  best_single_set: {
    name: gettext("best set"),
    about: gettext("The gold is the one rationale set that best matches the prediction."),
  },
  classification_scores: { name: "", about: "" },
  plausibility: { name: "", about: "" },
  consistency: { name: "", about: "" },
  faithfulness: { name: "", about: "" },
});

/** Measures by the last part of the key. */
const MEASURES = /** @type {Record<string, {name: string, about: string}>} */ ({
  p: { name: gettext("precision"), about: gettext("Precision: the share of what was predicted that people marked.") },
  r: { name: gettext("recall"), about: gettext("Recall: the share of what people marked that was predicted.") },
  f1: { name: gettext("F1"), about: gettext("F1: the harmonic mean of precision and recall.") },
  precision: { name: gettext("precision"), about: gettext("Precision of the model's labels.") },
  recall: { name: gettext("recall"), about: gettext("Recall of the model's labels.") },
  "f1-score": { name: gettext("F1"), about: gettext("F1 of the model's labels: the harmonic mean of precision and recall.") },
  support: { name: gettext("instances"), about: gettext("How many instances have this gold label.") },
  auprc: { name: gettext("AUPRC"), about: gettext("Area under the precision–recall curve; 1 when every marked token scores above every other.") },
  average_precision: { name: gettext("average precision"), about: gettext("Average precision over the ranking of the soft scores (documents with one class only are left out).") },
  roc_auc_score: { name: gettext("ROC AUC"), about: gettext("The chance that a marked token scores above an unmarked one; 0.5 is chance (documents with one class only are left out).") },
  accuracy: { name: gettext("accuracy"), about: gettext("The share of instances where the model's label is the gold label.") },
  comprehensiveness: { name: gettext("comprehensiveness"), about: gettext("How much the model's confidence in its label falls when the rationale is deleted from the input; higher means the rationale mattered more.") },
  sufficiency: { name: gettext("sufficiency"), about: gettext("How much the model's confidence in its label falls when it sees the rationale alone; lower means the rationale alone suffices.") },
  comprehensiveness_aopc: { name: gettext("comprehensiveness AOPC"), about: gettext("Comprehensiveness averaged over rationales of 1, 5, 10, 20 and 50 per cent of the tokens.") },
  sufficiency_aopc: { name: gettext("sufficiency AOPC"), about: gettext("Sufficiency averaged over rationales of 1, 5, 10, 20 and 50 per cent of the tokens.") },
  comprehensiveness_entropy: { name: gettext("comprehensiveness, entropy"), about: gettext("How the entropy of the model's label distribution changes when the rationale is deleted.") },
  sufficiency_entropy: { name: gettext("sufficiency, entropy"), about: gettext("How the entropy of the model's label distribution changes when it sees the rationale alone.") },
  comprehensiveness_kl: { name: gettext("comprehensiveness, KL"), about: gettext("KL divergence between the model's label distributions with and without the rationale.") },
  sufficiency_kl: { name: gettext("sufficiency, KL"), about: gettext("KL divergence between the model's label distributions on the rationale alone and on the whole input.") },
  k: { name: gettext("k (tokens)"), about: gettext("How many tokens a soft ranking keeps when it is cut to a rationale: the mean length of the human rationales.") },
  token_f1: { name: gettext("token F1"), about: gettext("F1 of the predicted tokens against the chosen gold tokens, averaged over instances.") },
  iou_match: { name: gettext("IOU match rate"), about: gettext("The share of predictions whose tokens overlap the chosen gold by at least half (overlap over union): the fine-grained benchmark's IOU figure, not ERASER's IOU F1.") },
  iou_match_rate: { name: gettext("IOU match rate"), about: gettext("The share of predictions whose tokens overlap the chosen gold by at least half (overlap over union): the fine-grained benchmark's IOU figure, not ERASER's IOU F1.") },
  instances: { name: gettext("instances"), about: gettext("How many instances were scored.") },
  map: { name: gettext("MAP"), about: gettext("Consistency under perturbation: how far the rationale of a perturbed copy keeps the original's tokens, in order of importance.") },
  new_p: { name: gettext("New-P"), about: gettext("The share of instances whose label the rationale alone keeps while the rest of the input changes it.") },
});

const SCOPES = /** @type {Record<string, {name: string, about: string}>} */ ({
  micro: { name: gettext("micro"), about: gettext("Micro: pooled over all spans or tokens, so long documents weigh more.") },
  macro: { name: gettext("macro"), about: gettext("Macro: averaged per document, so each document weighs the same.") },
  instance_micro: { name: gettext("micro"), about: gettext("Micro: pooled over all spans or tokens, so long documents weigh more.") },
  instance_macro: { name: gettext("macro"), about: gettext("Macro: averaged per document, so each document weighs the same.") },
});

/** A column heading and its definition for a flattened score key; a key it does not know
 * keeps its own name, with no definition.
 * @param {string} key @returns {{label: string, definition: string}} */
export function metricHeading(key) {
  const threshold = /@([0-9]+(?:\.[0-9]+)?)/.exec(key)?.[1];
  const parts = key.replace(/@[0-9]+(?:\.[0-9]+)?/g, "").split(".");
  const measure = MEASURES[parts[parts.length - 1]];
  if (!measure) return { label: key, definition: "" };
  /** @type {string[]} */ const names = [];
  /** @type {string[]} */ const abouts = [];
  /** @type {{name: string, about: string} | undefined} */ let scope;
  for (const part of parts.slice(0, -1)) {
    const group = GROUPS[part];
    if (SCOPES[part]) scope = SCOPES[part];
    else if (group) {
      if (group.name) names.push(part.startsWith("iou") && threshold ? `${group.name} ${threshold}` : group.name);
      if (group.about) abouts.push(group.about);
    } else if (part !== "prf") names.push(part);  // a class label, or "macro avg"
  }
  const label = [...names, measure.name].join(" ");
  const capitalized = label.charAt(0).toUpperCase() + label.slice(1);
  return {
    label: scope ? `${capitalized} (${scope.name})` : capitalized,
    definition: [...abouts, measure.about, scope?.about].filter(Boolean).join(" "),
  };
}
