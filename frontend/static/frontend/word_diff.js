// @ts-check
// Word-level diff of an original text and its perturbed copy, for the perturbation pages.
//
// Words are runs of letters and digits (each Chinese character on its own, as the
// benchmark splits Chinese) and single punctuation marks; whitespace only separates them.
// The alignment is a longest common subsequence over words, after the common prefix and
// suffix are set aside: edits are local, so the table that remains is small. A middle too
// large to tabulate (over MAX_CELLS word pairs) is shown as deleted and inserted whole.

const WORD = /\p{Script=Han}|(?:(?!\p{Script=Han})[\p{L}\p{M}\p{N}_'’])+|[^\s]/gu;
export const MAX_CELLS = 4_000_000;

/**
 * @typedef {{text: string, start: number, end: number}} Word
 * @typedef {{op: "equal"|"delete"|"insert", a?: Word, b?: Word}} Op
 */

/** @param {string} text @returns {Word[]} */
export function words(text) {
  return Array.from(text.matchAll(WORD), (m) => ({ text: m[0], start: m.index ?? 0, end: (m.index ?? 0) + m[0].length }));
}

/** @param {Word[]} x @param {Word[]} y @returns {Op[]} */
function alignMiddle(x, y) {
  const n = x.length;
  const m = y.length;
  /** @type {Op[]} */ const ops = [];
  if (n * m > MAX_CELLS) {
    x.forEach((a) => ops.push({ op: "delete", a }));
    y.forEach((b) => ops.push({ op: "insert", b }));
    return ops;
  }
  // lcs[i * (m + 1) + j]: length of the longest common subsequence of x[i:] and y[j:].
  const width = m + 1;
  const lcs = new Uint32Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * width + j] = x[i].text === y[j].text
        ? lcs[(i + 1) * width + j + 1] + 1
        : Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
    }
  }
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (x[i].text === y[j].text) {
      ops.push({ op: "equal", a: x[i++], b: y[j++] });
    } else if (lcs[(i + 1) * width + j] >= lcs[i * width + j + 1]) {
      ops.push({ op: "delete", a: x[i++] }); // deletions first, so a replacement reads old then new
    } else {
      ops.push({ op: "insert", b: y[j++] });
    }
  }
  while (i < n) ops.push({ op: "delete", a: x[i++] });
  while (j < m) ops.push({ op: "insert", b: y[j++] });
  return ops;
}

/** @param {string} before @param {string} after @returns {Op[]} */
export function diffWords(before, after) {
  const x = words(before);
  const y = words(after);
  let head = 0;
  while (head < x.length && head < y.length && x[head].text === y[head].text) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head
    && x[x.length - 1 - tail].text === y[y.length - 1 - tail].text) tail++;
  /** @type {Op[]} */ const ops = [];
  for (let k = 0; k < head; k++) ops.push({ op: "equal", a: x[k], b: y[k] });
  ops.push(...alignMiddle(x.slice(head, x.length - tail), y.slice(head, y.length - tail)));
  for (let k = tail; k > 0; k--) ops.push({ op: "equal", a: x[x.length - k], b: y[y.length - k] });
  return ops;
}

/** @param {Op[]} ops */
export function diffCounts(ops) {
  let inserted = 0;
  let deleted = 0;
  for (const { op } of ops) {
    if (op === "insert") inserted++;
    else if (op === "delete") deleted++;
  }
  return { inserted, deleted, changed: inserted + deleted > 0 };
}

/**
 * The perturbed text as DOM nodes, with inserted words in <ins> and deleted ones in <del>
 * (runs of either kept together). Every piece of text is a text node: imported text is
 * data, never markup.
 * @param {string} before @param {string} after @param {Op[]} [ops]
 */
export function diffFragment(before, after, ops = diffWords(before, after)) {
  const fragment = document.createDocumentFragment();
  let cursor = 0; // how much of `after` is written
  let k = 0;
  while (k < ops.length) {
    const op = ops[k].op;
    let last = k;
    while (last + 1 < ops.length && ops[last + 1].op === op) last++;
    if (op === "delete") {
      // Deleted words sit after the whitespace that follows the previous word.
      const gap = after.slice(cursor).match(/^\s*/)?.[0] ?? "";
      fragment.append(gap);
      cursor += gap.length;
      const del = document.createElement("del");
      del.className = "diff-del";
      del.textContent = before.slice(/** @type {Word} */ (ops[k].a).start, /** @type {Word} */ (ops[last].a).end);
      fragment.append(del, " ");
    } else {
      const first = /** @type {Word} */ (ops[k].b);
      const end = /** @type {Word} */ (ops[last].b).end;
      fragment.append(after.slice(cursor, first.start));
      if (op === "insert") {
        const ins = document.createElement("ins");
        ins.className = "diff-ins";
        ins.textContent = after.slice(first.start, end);
        fragment.append(ins);
      } else {
        fragment.append(after.slice(first.start, end));
      }
      cursor = end;
    }
    k = last + 1;
  }
  fragment.append(after.slice(cursor));
  return fragment;
}

/**
 * Show the diff of `before` and `after` in `box` and return its counts.
 * @param {HTMLElement} box @param {string} before @param {string} after
 */
export function showDiff(box, before, after) {
  const ops = diffWords(before, after);
  box.replaceChildren(diffFragment(before, after, ops));
  return diffCounts(ops);
}

/** "+2 −1 words", or "no change". @param {{inserted: number, deleted: number}} counts */
export function countsText({ inserted, deleted }) {
  if (!inserted && !deleted) return gettext("no change");
  return interpolate(ngettext("+%(inserted)s −%(deleted)s word", "+%(inserted)s −%(deleted)s words", inserted + deleted),
    { inserted, deleted }, true);
}
