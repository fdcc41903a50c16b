// @ts-check
// What marks where a run of highlighted tokens begins, outside the text itself: the set's
// number floating above the run's first token, and a tick on the minimap beside the texts.
// Both live in layers of their own (`contain: strict`), so adding, moving or removing one
// lays out that layer alone: a token's own change stays a paint-only change of its class,
// however long the document (a number inside the token's line made the browser lay out
// the whole paragraph again at every new run).

/** @typedef {import("./token_selection.js").TokenPosition} TokenPosition */

export class RunMarks {
  /** @param {HTMLElement} main the column holding the texts, which the minimap maps
   * @param {HTMLElement} minimap the strip beside it
   * @param {(at: TokenPosition) => void} jump what a click on a tick does */
  constructor(main, minimap, jump) {
    this.main = main;
    this.minimap = minimap;
    /** The runs marked now, by "doc:token": their token, badge, tick and set.
     * @type {Map<string, {at: TokenPosition, node: HTMLElement, badge: HTMLElement, tick: HTMLElement, set: number}>} */
    this.marks = new Map();
    /** Each document's badge layer, by its index among the shown documents.
     * @type {Map<number, HTMLElement>} */
    this.layers = new Map();
    minimap.addEventListener("click", (event) => {
      const tick = /** @type {HTMLElement} */ (event.target).closest(".minimap-mark");
      const mark = tick && this.marks.get(/** @type {HTMLElement} */ (tick).dataset.key || "");
      if (mark) {
        jump(mark.at);
        return;
      }
      // Elsewhere on the strip: that point of the texts comes to the middle of the screen.
      const strip = minimap.getBoundingClientRect();
      const box = main.getBoundingClientRect();
      const y = box.top + window.scrollY + ((event.clientY - strip.top) / strip.height) * box.height;
      window.scrollTo({ top: Math.max(0, y - window.innerHeight / 2) });
    });
    if (typeof ResizeObserver !== "undefined") new ResizeObserver(() => this.placeAll()).observe(main);
  }

  /** A document's layer for the numbers, appended to its box once.
   * @param {number} doc @param {HTMLElement} box */
  addDocument(doc, box) {
    const layer = document.createElement("div");
    layer.className = "run-badges";
    layer.setAttribute("aria-hidden", "true");
    box.appendChild(layer);
    this.layers.set(doc, layer);
  }

  /** Marks a run of set `set` beginning at the token, or unmarks it (set -1). Touches
   * nothing when the mark is already so. @param {TokenPosition} at @param {HTMLElement} node @param {number} set */
  show(at, node, set) {
    const key = `${at.doc}:${at.token}`;
    const mark = this.marks.get(key);
    if (mark && mark.set === set) return;
    if (set < 0) {
      if (!mark) return;
      mark.badge.remove();
      mark.tick.remove();
      this.marks.delete(key);
      return;
    }
    const colour = `set-${set % 6}`;
    if (mark) {
      mark.set = set;
      mark.badge.className = `run-badge ${colour}`;
      mark.badge.dataset.setNumber = String(set + 1);
      mark.tick.className = `minimap-mark ${colour}`;
      return;
    }
    const layer = this.layers.get(at.doc);
    if (!layer) return;
    const badge = document.createElement("span");
    badge.className = `run-badge ${colour}`;
    badge.dataset.setNumber = String(set + 1);
    const tick = document.createElement("span");
    tick.className = `minimap-mark ${colour}`;
    tick.dataset.key = key;
    const added = { at: { ...at }, node, badge, tick, set };
    this.marks.set(key, added);
    this.place(added);
    layer.appendChild(badge);
    this.minimap.appendChild(tick);
  }

  /** @param {{node: HTMLElement, badge: HTMLElement, tick: HTMLElement}} mark */
  place(mark) {
    // From the screen's boxes (offsetTop would be from the token's block, which contains
    // its own layout); the first box of a token that wraps onto the next line.
    const box = mark.node.getClientRects()[0] || mark.node.getBoundingClientRect();
    const layer = /** @type {HTMLElement} */ (mark.badge.parentElement || this.layers.get(Number(mark.node.dataset.d)));
    const origin = layer ? layer.getBoundingClientRect() : box;
    mark.badge.style.transform = `translate(${box.left - origin.left}px, ${box.top - origin.top}px)`;
    const height = this.main.offsetHeight || 1;
    const top = box.top - this.main.getBoundingClientRect().top;
    mark.tick.style.top = `${Math.min(100, Math.max(0, (top / height) * 100)).toFixed(3)}%`;
  }

  /** After the texts are laid out anew (a narrower window wraps them otherwise). */
  placeAll() {
    for (const mark of this.marks.values()) this.place(mark);
  }
}
