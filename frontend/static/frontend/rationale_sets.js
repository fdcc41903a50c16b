// @ts-check
// The annotator's rationale sets for one item: each set maps a document's id to the indexes
// of its highlighted tokens, and one set is the current one, which edits change. Plain data
// only (no DOM, no window), so that `node --test` checks it; the workspace paints the tokens.

/** One set as plain data: [docid, its tokens in ascending order], in the order the
 * documents were first highlighted (the order the submit's spans follow).
 * @typedef {Array<[string, number[]]>} SetEntries */
/** Tokens [start_token, end_token) of one document, as the submit API takes them.
 * @typedef {{docid: string, start_token: number, end_token: number}} TokenSpan */
/** @typedef {"add"|"remove"} RunMode */

/** @param {Set<number>} tokens */
function ascending(tokens) {
  return [...tokens].sort((a, b) => a - b);
}

/** The tokens whose marks may differ between two states of the sets (an undo, a redo, a
 * clear): every token some set holds in one state and not in the other, and the token after
 * each (whether it begins a run may change with it). Only these are repainted, however long
 * the document. @param {SetEntries[]} before @param {SetEntries[]} after
 * @returns {Map<string, Set<number>>} docid -> tokens */
export function tokensDiffering(before, after) {
  /** @type {Map<string, Set<number>>} */ const changed = new Map();
  /** @param {SetEntries|undefined} set @returns {Map<string, Set<number>>} */
  const asMap = (set) => new Map((set || []).map(([docid, tokens]) => [docid, new Set(tokens)]));
  /** @param {string} docid @param {number} token */
  const mark = (docid, token) => {
    let tokens = changed.get(docid);
    if (!tokens) changed.set(docid, (tokens = new Set()));
    tokens.add(token);
    tokens.add(token + 1);
  };
  for (let s = 0; s < Math.max(before.length, after.length); s += 1) {
    const [was, now] = [asMap(before[s]), asMap(after[s])];
    for (const [one, other] of [[was, now], [now, was]]) {
      for (const [docid, tokens] of one) {
        const there = other.get(docid);
        for (const token of tokens) if (!there || !there.has(token)) mark(docid, token);
      }
    }
  }
  return changed;
}

/** Where each run of highlighted tokens begins in one document, in text order: a token some
 * set holds whose previous token that set does not hold. The keys that jump from highlight
 * to highlight, and the minimap, go by these. @param {SetEntries[]} entries @param {string} docid
 * @param {number} [only] one set's index, or every set when left out @returns {number[]} */
export function runStarts(entries, docid, only) {
  const starts = new Set();
  entries.forEach((set, s) => {
    if (only !== undefined && s !== only) return;
    const tokens = set.find(([id]) => id === docid)?.[1] || [];
    tokens.forEach((token, n) => { if (n === 0 || tokens[n - 1] !== token - 1) starts.add(token); });
  });
  return [...starts].sort((a, b) => a - b);
}

export class RationaleSets {
  /** An empty first set, current. */
  constructor() {
    /** @type {Array<Map<string, Set<number>>>} */ this.sets = [new Map()];
    this.current = 0;
  }

  /** The sets a draft or an undo step holds, with `current` kept within them. There is
   * always at least one set, even when `entries` has none.
   * @param {SetEntries[]} entries @param {number} [current] */
  static fromEntries(entries, current = 0) {
    const rationale = new RationaleSets();
    if (entries.length) {
      rationale.sets = entries.map((set) => new Map(set.map(([docid, tokens]) => [docid, new Set(tokens)])));
    }
    rationale.current = Number.isInteger(current) ? Math.max(0, Math.min(current, rationale.sets.length - 1)) : 0;
    return rationale;
  }

  /** @returns {SetEntries[]} */
  toEntries() {
    return this.sets.map((set) => [...set.entries()].map(([docid, tokens]) => [docid, ascending(tokens)]));
  }

  get count() {
    return this.sets.length;
  }

  /** Whether the current set holds the token. @param {string} docid @param {number} token */
  has(docid, token) {
    return Boolean(this.sets[this.current].get(docid)?.has(token));
  }

  /** The current set's tokens in one document (empty when it has none there).
   * @param {string} docid @returns {Iterable<number>} */
  tokensIn(docid) {
    return this.sets[this.current].get(docid) ?? [];
  }

  /** Adds the tokens `from` to `to` (both included, either order) of one document to the
   * current set, or removes them. A document left with no token leaves the set.
   * @param {string} docid @param {number} from @param {number} to @param {RunMode} mode */
  applyRun(docid, from, to, mode) {
    const set = this.sets[this.current];
    let tokens = set.get(docid);
    if (!tokens) {
      tokens = new Set();
      set.set(docid, tokens);
    }
    const [lo, hi] = from <= to ? [from, to] : [to, from];
    for (let i = lo; i <= hi; i += 1) {
      if (mode === "add") tokens.add(i);
      else tokens.delete(i);
    }
    if (tokens.size === 0) set.delete(docid);
  }

  /** Highlights the token in the current set, or clears it if it was there; answers which.
   * @param {string} docid @param {number} token @returns {RunMode} */
  toggle(docid, token) {
    const mode = this.has(docid, token) ? "remove" : "add";
    this.applyRun(docid, token, token, mode);
    return mode;
  }

  /** Makes the last set current, after appending an empty one unless the last is already
   * empty (so that pressing "new set" twice makes one). Answers whether a set was added. */
  startNew() {
    const added = this.sets[this.sets.length - 1].size > 0;
    if (added) this.sets.push(new Map());
    this.current = this.sets.length - 1;
    return added;
  }

  /** Makes set `index` (from 0) current; answers false, changing nothing, when there is no
   * such set. @param {number} index */
  choose(index) {
    if (!Number.isInteger(index) || index < 0 || index >= this.sets.length) return false;
    this.current = index;
    return true;
  }

  clearCurrent() {
    this.sets[this.current] = new Map();
  }

  /** Back to one empty set. */
  clearAll() {
    this.sets = [new Map()];
    this.current = 0;
  }

  /** How many tokens set `index` holds, over all documents. @param {number} index */
  tokenCount(index) {
    return [...this.sets[index].values()].reduce((n, tokens) => n + tokens.size, 0);
  }

  /** How many tokens all the sets hold, a token in two sets counted twice. */
  totalTokens() {
    return this.sets.reduce((n, _, s) => n + this.tokenCount(s), 0);
  }

  /** How many of the document's tokens are in some set. @param {string} docid */
  highlightedIn(docid) {
    return new Set(this.sets.flatMap((set) => [...(set.get(docid) || [])])).size;
  }

  /** How a token is shown: the first set holding it (-1 for none), how many sets hold it,
   * and whether it begins a run of that first set (its previous token is not in it).
   * @param {string} docid @param {number} token */
  marksOf(docid, token) {
    let first = -1;
    let count = 0;
    this.sets.forEach((set, s) => {
      if (set.get(docid)?.has(token)) {
        count += 1;
        if (first < 0) first = s;
      }
    });
    const runStart = first >= 0 && !(token > 0 && this.sets[first].get(docid)?.has(token - 1));
    return { first, count, runStart };
  }

  /** The non-empty sets as the submit API takes them: each set's consecutive tokens of a
   * document joined into one span. @returns {TokenSpan[][]} */
  spans() {
    return this.sets.map((set) => {
      /** @type {TokenSpan[]} */ const spans = [];
      for (const [docid, tokens] of set.entries()) {
        for (const t of ascending(tokens)) {
          const last = spans[spans.length - 1];
          if (last && last.docid === docid && last.end_token === t) last.end_token = t + 1;
          else spans.push({ docid, start_token: t, end_token: t + 1 });
        }
      }
      return spans;
    }).filter((spans) => spans.length > 0);
  }
}
