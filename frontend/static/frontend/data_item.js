// @ts-check
// The data manager's item page: the item's texts once, every annotation of every round as
// a row of highlights lined up token by token under a per-token agreement strip, the
// changes each revision made, and the actions an admin or curator takes from here.
//
// Long documents: the text is cut into rows (item_rows.js); each row holds the agreement
// strip and one line per annotation, built once as plain nodes. No token has a listener of
// its own: one listener per text explains the token under the pointer or the focus.
// Every server string is inserted as text.

import { confirmAction } from "./confirm_dialog.js";
import { formatDateTime } from "./format.js";
import { api, el, errorText, fmt } from "./http.js";
import { flagName, statusName } from "./item_terms.js";
import { themeColour } from "./theme.js";
import { agreementCounts, latestRounds, revisionDiff, ROW_TOKENS, setsByToken, shareStep, tokenRows } from "./item_rows.js";
import { codeUnitsOf } from "./text_offsets.js";

const COLOURS = 6;
const SHARE_STEPS = 5;
/** The strip's colours by step, as data_manager.css has them (.share-0 … .share-5). */
const SHARE_COLOURS = [0, 1, 2, 3, 4, 5].map((n) => `var(--share-${n})`);

const VERDICTS = /** @type {Record<string, string>} */ ({
  accepted: gettext("accepted"),
  revise: gettext("sent back"),
  discarded: gettext("discarded"),
});

/** The annotator's row key: A, B, …, Z, AA, … @param {number} n */
function rowKey(n) {
  let key = "";
  let k = n;
  do {
    key = String.fromCharCode(65 + (k % 26)) + key;
    k = Math.floor(k / 26) - 1;
  } while (k >= 0);
  return key;
}

/** @param {number} ms */
function duration(ms) {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return interpolate(gettext("%(s)s s"), { s: seconds }, true);
  return interpolate(gettext("%(m)s min %(s)s s"), { m: Math.floor(seconds / 60), s: seconds % 60 }, true);
}

/** @param {number[]} values */
const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : null);

/** What the texts are called, as the workspace calls them. @param {string} taskType @param {any[]} texts */
function textNames(taskType, texts) {
  const bodies = texts.filter((t) => t.role !== "question");
  return texts.map((text) => {
    if (text.role === "question") return gettext("Question");
    const n = bodies.indexOf(text);
    if (taskType === "reading_comprehension") return bodies.length > 1 ? interpolate(gettext("Passage %(n)s"), { n: n + 1 }, true) : gettext("Passage");
    return bodies.length > 1 ? interpolate(gettext("Text %(n)s"), { n: n + 1 }, true) : gettext("Text");
  });
}

class ItemPage {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    this.projectId = root.dataset.projectId;
    this.itemId = root.dataset.itemId;
    this.canAct = root.dataset.canAct === "true";
    this.body = /** @type {HTMLElement} */ (root.querySelector(".item-body"));
    this.actions = /** @type {HTMLElement} */ (root.querySelector(".item-actions"));
    this.message = /** @type {HTMLElement} */ (root.querySelector(".message"));
    /** @type {any} */ this.data = null;
    /** @type {Map<number, string>} */ this.keys = new Map();
    this.showEarlier = true;
    this.showChanges = true;
  }

  /** @param {string} text @param {string} kind */
  say(text, kind) {
    this.message.textContent = text;
    this.message.className = `message ${kind}`;
  }

  async load() {
    this.root.dataset.ready = "false";
    const response = await api(`/api/projects/${this.projectId}/items/${this.itemId}/`, "GET");
    if (!response.ok) {
      this.body.replaceChildren(el("p", errorText(response.data), "error empty-state"));
      this.root.dataset.ready = "true";
      return;
    }
    this.data = response.data;
    this.render();
    this.root.dataset.ready = "true";
  }

  render() {
    const { item, annotations } = this.data;
    this.keys = new Map(annotations.map((/** @type {any} */ a, /** @type {number} */ n) => [a.id, rowKey(n)]));
    this.renderActions(item);
    this.body.replaceChildren(this.facts(item), this.annotationTable(annotations), this.textsSection());
  }

  /** @param {any} item */
  renderActions(item) {
    this.actions.replaceChildren();
    const chips = el("span", undefined, "item-chips");
    if (item.status) chips.appendChild(el("span", statusName(item.status), `status-chip status-${item.status}`));
    // An item both gold and excluded has one status; the other shows as a chip beside it.
    if (item.marked_gold && item.status !== "gold") chips.appendChild(el("span", statusName("gold"), "status-chip status-gold"));
    if (item.excluded && item.status !== "excluded") chips.appendChild(el("span", statusName("excluded"), "status-chip status-excluded"));
    this.actions.appendChild(chips);
    const curation = this.root.dataset.curationUrl;
    if (curation) {
      const link = el("a", gettext("Open in curation"), "button secondary-link");
      link.href = curation;
      link.id = "open-curation";
      this.actions.appendChild(link);
    }
    if (!this.canAct) return;
    const known = (this.root.dataset.bulkActions || "").split(" ");
    /** An action the bulk API knows, as a button that asks first.
     * @param {string} id @param {string} action @param {string} label @param {import("./confirm_dialog.js").ConfirmOptions} question */
    const button = (id, action, label, question) => {
      if (!known.includes(action)) return;
      const b = /** @type {HTMLButtonElement} */ (el("button", label, "secondary"));
      b.type = "button";
      b.id = id;
      b.addEventListener("click", () => this.bulk(action, question));
      this.actions.appendChild(b);
    };
    const name = item.annotation_id;
    if (item.marked_gold) {
      button("unmark-gold", "unmark_gold", gettext("Unmark gold"), {
        title: gettext("Unmark as gold"),
        message: interpolate(gettext("Item %(name)s leaves the project's gold set."), { name }, true),
        confirmLabel: gettext("Unmark gold"),
      });
    } else {
      button("mark-gold", "mark_gold", gettext("Mark as gold"), {
        title: gettext("Mark as gold"),
        message: interpolate(gettext("Item %(name)s joins the project's gold set."), { name }, true),
        confirmLabel: gettext("Mark as gold"),
      });
    }
    if (item.excluded) {
      button("include-item", "include", gettext("Include in exports"), {
        title: gettext("Include in exports"),
        message: interpolate(gettext("Item %(name)s will be exported again."), { name }, true),
        confirmLabel: gettext("Include"),
      });
    } else {
      button("exclude-item", "exclude", gettext("Exclude from exports"), {
        title: gettext("Exclude from exports"),
        message: interpolate(gettext("Item %(name)s will be left out of every export."), { name }, true),
        confirmLabel: gettext("Exclude"),
      });
    }
    button("send-back", "send_back", gettext("Send back for revision"), {
      title: gettext("Send back for revision"),
      message: interpolate(gettext("The latest annotations of item %(name)s go back to their annotators for another round, with your comment."), { name }, true),
      confirmLabel: gettext("Send back"),
      comment: { label: gettext("Comment for the annotators"), required: true },
    });
  }

  /** @param {string} action @param {import("./confirm_dialog.js").ConfirmOptions} question */
  async bulk(action, question) {
    const answer = await confirmAction(question);
    if (!answer.confirmed) return;
    /** @type {Record<string, any>} */ const args = {};
    if (action === "send_back") args.comment = answer.comment;
    const response = await api(`/api/projects/${this.projectId}/items/bulk/`, "POST", {
      action, ids: [Number(this.itemId)], args,
    });
    if (!response.ok) {
      this.say(errorText(response.data), "error");
      return;
    }
    this.say(interpolate(ngettext("Done: %(touched)s item changed.", "Done: %(touched)s items changed.", response.data.touched),
      response.data, true), "ok");
    await this.load();
  }

  /** @param {any} item */
  facts(item) {
    const facts = el("div", undefined, "facts-row gold-facts item-facts");
    /** @param {string} name @param {string} value @param {string} [cls] */
    const fact = (name, value, cls = "") => {
      const box = el("div", undefined, `fact ${cls}`);
      box.append(el("span", name, "fact-name"), el("span", value, "fact-value"));
      facts.appendChild(box);
      return box;
    };
    fact(gettext("Split"), item.split || gettext("unassigned"));
    if (item.answer) {
      fact(gettext("Gold answer"), "none" in item.answer ? gettext("no answer in the passage") : item.answer.text, "gold-label");
    } else {
      fact(gettext("Gold label"), item.label ?? gettext("(none)"), "gold-label");
    }
    if (item.majority_label) fact(gettext("Annotators' majority"), item.majority_label);
    const curated = this.data.curated;
    if (curated) {
      const curator = curated.curator && typeof curated.curator === "object" ? curated.curator.username : curated.curator;
      const who = [curator, curated.curated_at ? formatDateTime(curated.curated_at) : "", curated.rule || ""].filter(Boolean).join(" · ");
      fact(gettext("Curated"), who || gettext("yes"), "curated-fact");
      if (curated.stale) fact(gettext("Curated gold"), gettext("stale: an annotation changed after curation"), "curated-stale");
      if (curated.label) fact(gettext("Curated label"), curated.label);
    }
    if (item.query && !item.texts.some((/** @type {any} */ t) => t.role === "question")) fact(gettext("Question"), item.query, "query");
    if ((item.options || []).length) fact(gettext("Options"), item.options.join(" · "));
    const p = item.perturbation;
    if (p && p.role === "perturbed" && p.original_id) {
      const box = fact(gettext("Perturbation of"), "");
      box.lastChild?.appendChild(this.itemLink(p.original_id));
      if (p.types.length) box.appendChild(el("span", `(${p.types.join(", ")})`, "muted"));
    }
    if (p && p.perturbed_ids.length) {
      const box = fact(gettext("Perturbed copies"), "");
      p.perturbed_ids.forEach((/** @type {number} */ id, /** @type {number} */ n) => {
        if (n) box.lastChild?.appendChild(document.createTextNode(", "));
        box.lastChild?.appendChild(this.itemLink(id));
      });
    }
    return facts;
  }

  /** @param {number} id */
  itemLink(id) {
    const link = el("a", `#${id}`);
    link.href = `/projects/${this.projectId}/data/items/${id}/`;
    return link;
  }

  /** @param {any[]} annotations */
  annotationTable(annotations) {
    const section = el("section", undefined, "card annotations-card");
    const head = el("div", undefined, "section-head");
    head.appendChild(el("h2", interpolate(ngettext("%(count)s annotation", "%(count)s annotations", annotations.length), { count: annotations.length }, true)));
    section.appendChild(head);
    if (!annotations.length) {
      section.appendChild(el("p", gettext("Nobody has submitted an annotation of this item yet."), "muted empty-state"));
      return section;
    }
    const table = el("table", undefined, "grid dense annotation-table");
    const header = el("tr");
    [gettext("Row"), gettext("Annotator"), gettext("Variant"), gettext("Round"), gettext("Submitted"), gettext("Time spent"),
      gettext("Label"), gettext("Sets"), gettext("Flags"), gettext("Review"), gettext("Comments")]
      .forEach((h) => header.appendChild(el("th", h)));
    const thead = el("thead");
    thead.appendChild(header);
    table.appendChild(thead);
    const tbody = el("tbody");
    for (const a of annotations) {
      const row = el("tr");
      row.dataset.annotation = String(a.id);
      row.appendChild(el("td", this.keys.get(a.id), "row-key"));
      row.appendChild(el("td", a.annotator.username));
      row.appendChild(el("td", a.variant.name));
      const round = el("td", String(a.round));
      if (a.revision_of) round.appendChild(el("span", ` ${interpolate(gettext("(revises %(key)s)"), { key: this.keys.get(a.revision_of) || `#${a.revision_of}` }, true)}`, "muted"));
      row.appendChild(round);
      row.appendChild(el("td", formatDateTime(a.submitted_at)));
      row.appendChild(el("td", duration(a.time_spent_ms)));
      row.appendChild(el("td", a.label ?? "—"));
      const sets = el("td", undefined, "set-chips");
      a.sets.forEach((/** @type {any} */ set, /** @type {number} */ n) => {
        const tokens = set.spans.reduce((/** @type {number} */ sum, /** @type {any} */ s) => sum + s.end_token - s.start_token, 0);
        const chip = el("span", interpolate(ngettext("%(count)s token", "%(count)s tokens", tokens), { count: tokens }, true), `legend-set set-${n % COLOURS}`);
        chip.dataset.setNumber = String(n + 1);
        sets.appendChild(chip);
      });
      if (!a.sets.length) sets.textContent = gettext("empty");
      row.appendChild(sets);
      const flags = el("td");
      for (const flag of a.flags) {
        flags.appendChild(el("span", flagName(flag.kind), `flag-chip${flag.open ? "" : " closed"}`));
      }
      row.appendChild(flags);
      row.appendChild(this.reviewCell(a.review));
      const comments = el("td", undefined, "comments");
      for (const comment of a.review.comments) {
        const line = el("div");
        const where = comment.set === null ? "" : ` · ${interpolate(gettext("set %(set)s"), { set: comment.set + 1 }, true)}`;
        line.append(el("strong", `${comment.reviewer}${where}: `), comment.text);
        comments.appendChild(line);
      }
      row.appendChild(comments);
      tbody.appendChild(row);
    }
    table.appendChild(tbody);
    // A wide table scrolls sideways: focusable, so the keyboard can scroll it too.
    const scroll = el("div", undefined, "scroll");
    scroll.tabIndex = 0;
    scroll.setAttribute("role", "region");
    scroll.setAttribute("aria-label", gettext("Annotations of this item"));
    scroll.appendChild(table);
    section.appendChild(scroll);
    return section;
  }

  /** @param {any} review */
  reviewCell(review) {
    const cell = el("td", undefined, "review-cell");
    if (review.verdict) cell.appendChild(el("span", VERDICTS[review.verdict] || review.verdict, `verdict-chip verdict-${review.verdict}`));
    if (!review.scores.length) {
      if (!review.verdict) {
        cell.textContent = gettext("not reviewed");
        cell.classList.add("muted");
      }
      return cell;
    }
    const sets = review.scores.flatMap((/** @type {any} */ s) => s.sets);
    const line = interpolate(gettext("sufficiency %(s)s · compactness %(c)s · comprehensiveness %(w)s"), {
      s: fmt(mean(sets.map((/** @type {any} */ s) => s.sufficiency))),
      c: fmt(mean(sets.map((/** @type {any} */ s) => s.compactness))),
      w: fmt(mean(review.scores.map((/** @type {any} */ s) => s.comprehensiveness))),
    }, true);
    cell.appendChild(el("div", line, "review-means"));
    cell.appendChild(el("div", interpolate(ngettext("%(count)s reviewer", "%(count)s reviewers", review.scores.length), { count: review.scores.length }, true), "muted"));
    return cell;
  }

  textsSection() {
    const section = el("section", undefined, "texts-section");
    const controls = el("div", undefined, "view-controls");
    /** @param {string} label @param {boolean} checked @param {(on: boolean) => void} change @param {string} id */
    const toggle = (label, checked, change, id) => {
      const box = el("label", undefined, "check");
      const input = /** @type {HTMLInputElement} */ (el("input"));
      input.type = "checkbox";
      input.checked = checked;
      input.id = id;
      input.addEventListener("change", () => change(input.checked));
      box.append(input, ` ${label}`);
      controls.appendChild(box);
    };
    const annotations = this.data.annotations;
    const hasRevisions = annotations.some((/** @type {any} */ a) => a.revision_of);
    if (hasRevisions) {
      toggle(gettext("Earlier rounds"), this.showEarlier, (on) => { this.showEarlier = on; this.redrawTexts(); }, "show-earlier");
      toggle(gettext("Changes between rounds"), this.showChanges, (on) => { this.showChanges = on; this.redrawTexts(); }, "show-changes");
    }
    section.appendChild(controls);
    section.appendChild(this.legend());
    const texts = el("div", undefined, "aligned-texts");
    this.textsBox = texts;
    section.appendChild(texts);
    this.redrawTexts();
    return section;
  }

  legend() {
    const box = el("div", undefined, "agreement-legend");
    box.id = "agreement-legend";
    box.appendChild(el("span", gettext("Agreement strip: share of annotators who highlighted the token"), "legend-title"));
    const scale = el("span", undefined, "share-scale");
    scale.setAttribute("role", "img");
    scale.setAttribute("aria-label", gettext("From white (nobody) through lighter shades (some annotators: disagreement) to the darkest (every annotator)."));
    [[0, gettext("nobody")], [1, "≤ 25%"], [2, "≤ 50%"], [3, "≤ 75%"], [4, "< 100%"], [5, gettext("everyone")]].forEach(([step, label]) => {
      const swatch = el("span", String(label), `share-swatch share-${step}`);
      scale.appendChild(swatch);
    });
    box.appendChild(scale);
    box.appendChild(el("span", gettext("Rationale sets: each set has its fill and underline (set 1 solid, set 2 dashed, set 3 dotted …); point at a token for its set."), "muted legend-note"));
    return box;
  }

  redrawTexts() {
    const box = /** @type {HTMLElement} */ (this.textsBox);
    const { item, annotations, token_agreement: agreement } = this.data;
    const shown = this.showEarlier ? annotations : latestRounds(annotations);
    const byId = new Map(annotations.map((/** @type {any} */ a) => [a.id, a]));
    const lines = shown.map((/** @type {any} */ a) => ({
      annotation: a,
      sets: setsByToken(a.sets),
      diff: this.showChanges && a.revision_of && byId.has(a.revision_of) ? revisionDiff(byId.get(a.revision_of).sets, a.sets) : null,
    }));
    const names = textNames(this.root.dataset.taskType || "", item.texts);
    // The curated gold, once curation has made one: a line of its own under the strip.
    const curated = this.data.curated && Array.isArray(this.data.curated.sets) ? setsByToken(this.data.curated.sets) : null;
    box.replaceChildren();
    item.texts.forEach((/** @type {any} */ text, /** @type {number} */ n) => {
      box.appendChild(this.alignedText(text, names[n], lines, agreement[text.docid] || [], curated));
    });
  }

  /**
   * One text: its name, the agreement strip in words, then row by row the strip and one
   * line per annotation, every line holding the same tokens so they line up.
   * @param {any} text @param {string} name @param {Array<{annotation: any, sets: Map<string, Map<number, number>>, diff: Map<string, {added: number[], removed: number[]}>|null}>} lines @param {number[]} shares
   * @param {Map<string, Map<number, number>>|null} curated
   */
  alignedText(text, name, lines, shares, curated) {
    const panel = el("section", undefined, "panel aligned-panel");
    panel.dataset.docid = text.docid;
    const head = el("header", undefined, "panel-head");
    head.appendChild(el("h3", name, "panel-title"));
    const counts = agreementCounts(shares);
    head.appendChild(el("span", interpolate(gettext("%(tokens)s tokens · every annotator: %(all)s · some (disagreement): %(some)s · nobody: %(none)s"),
      { tokens: text.tokens.length, ...counts }, true), "doc-count agreement-summary"));
    panel.appendChild(head);
    if (text.tokens.length > 3 * ROW_TOKENS) panel.appendChild(this.overview(shares, text.docid));
    const language = this.root.dataset.language || "";
    const rows = el("div", undefined, "aligned-rows");
    if (language) rows.lang = language;
    const tokens = /** @type {number[][]} */ (text.tokens);
    // The server's offsets count code points; the text is sliced in UTF-16 units.
    const at = codeUnitsOf(text.text);
    /** @param {number} i */
    const tokenText = (i) => text.text.slice(at(tokens[i][0]), at(tokens[i][1]));
    /** What stands between token i and the next: the text's own spacing (none between
     * Chinese characters), a line break read as a space. @param {number} i */
    const gapAfter = (i) => text.text.slice(at(tokens[i][1]), at(tokens[i + 1][0])).replace(/\s+/g, " ");
    for (const [start, end] of tokenRows(tokens.length, text.sentences || [])) {
      const block = el("div", undefined, "aligned-block");
      block.dataset.start = String(start);
      const strip = this.line(gapAfter, gettext("Agreement"), "agreement-line", start, end, tokenText, (token, i) => {
        const step = shareStep(shares[i] ?? 0, SHARE_STEPS);
        token.className = `tok share-${step}`;
      });
      block.appendChild(strip);
      if (curated) {
        const gold = curated.get(text.docid);
        block.appendChild(this.line(gapAfter, gettext("Curated gold"), "curated-line", start, end, tokenText, (token, i) => {
          const set = gold?.get(i);
          if (set !== undefined) {
            token.classList.add("sel", `set-${set % COLOURS}`);
            token.dataset.set = String(set + 1);
          }
        }));
      }
      for (const { annotation, sets, diff } of lines) {
        const key = this.keys.get(annotation.id);
        const label = `${key} · ${annotation.annotator.username} · r${annotation.round}`;
        const mine = sets.get(text.docid);
        const line = this.line(gapAfter, label, "annotation-line", start, end, tokenText, (token, i) => {
          const set = mine?.get(i);
          if (set !== undefined) {
            token.classList.add("sel", `set-${set % COLOURS}`);
            token.dataset.set = String(set + 1);
          }
        });
        line.dataset.annotation = String(annotation.id);
        block.appendChild(line);
        const changes = diff?.get(text.docid);
        if (changes) {
          const added = new Set(changes.added);
          const removed = new Set(changes.removed);
          if (changes.added.some((t) => t >= start && t < end) || changes.removed.some((t) => t >= start && t < end)) {
            const diffLine = this.line(gapAfter, interpolate(gettext("%(key)s changes since round %(round)s"), { key, round: annotation.round - 1 }, true),
              "diff-line", start, end, tokenText, (token, i) => {
                if (added.has(i)) token.classList.add("added");
                else if (removed.has(i)) token.classList.add("removed");
              });
            diffLine.dataset.annotation = String(annotation.id);
            block.appendChild(diffLine);
          }
        }
      }
      rows.appendChild(block);
    }
    rows.addEventListener("mouseover", (event) => this.explain(event, shares, lines, text.docid));
    panel.appendChild(rows);
    return panel;
  }

  /**
   * The whole text's strip at a glance, one pixel column per token (a long text's rows
   * run far down the page): a click goes to the row of that token.
   * @param {number[]} shares @param {string} docid
   */
  overview(shares, docid) {
    const canvas = /** @type {HTMLCanvasElement} */ (el("canvas", undefined, "agreement-overview"));
    canvas.width = Math.min(shares.length, 2000);
    canvas.height = 1;
    const counts = agreementCounts(shares);
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", interpolate(gettext("The whole text's agreement strip: every annotator: %(all)s tokens, some (disagreement): %(some)s, nobody: %(none)s. Click to go to a part."), counts, true));
    canvas.title = gettext("Click to go to this part of the text");
    const context = canvas.getContext("2d");
    if (context) {
      const perColumn = shares.length / canvas.width;
      for (let x = 0; x < canvas.width; x += 1) {
        const from = Math.floor(x * perColumn);
        const to = Math.max(from + 1, Math.floor((x + 1) * perColumn));
        // A column of several tokens shows its most disputed: partial shares stand out.
        const column = shares.slice(from, to);
        const disputed = column.find((v) => v > 0 && v < 1);
        const step = shareStep(disputed ?? Math.max(...column), SHARE_STEPS);
        context.fillStyle = themeColour(SHARE_COLOURS[step]);
        context.fillRect(x, 0, 1, 1);
      }
    }
    canvas.addEventListener("click", (event) => {
      const box = canvas.getBoundingClientRect();
      const token = Math.floor(((event.clientX - box.left) / box.width) * shares.length);
      const blocks = [...this.root.querySelectorAll(`.aligned-panel[data-docid="${CSS.escape(docid)}"] .aligned-block`)];
      const target = blocks.filter((b) => Number(/** @type {HTMLElement} */ (b).dataset.start) <= token).pop();
      target?.scrollIntoView({ block: "center" });
    });
    return canvas;
  }

  /**
   * One line of a row: its label, then tokens start..end with the text between them.
   * @param {(i: number) => string} gapAfter @param {string} label @param {string} cls @param {number} start @param {number} end
   * @param {(i: number) => string} tokenText @param {(token: HTMLElement, i: number) => void} mark
   */
  line(gapAfter, label, cls, start, end, tokenText, mark) {
    const line = el("div", undefined, `aligned-line ${cls}`);
    line.appendChild(el("span", label, "line-label"));
    const body = el("span", undefined, "line-text");
    for (let i = start; i < end; i += 1) {
      const token = el("span", tokenText(i), "tok");
      token.dataset.i = String(i);
      mark(token, i);
      body.appendChild(token);
      if (i + 1 < end) {
        const gap = gapAfter(i);
        if (gap) body.appendChild(document.createTextNode(gap));
      }
    }
    line.appendChild(body);
    return line;
  }

  /** A token's explanation, written into its title when the pointer reaches it.
   * @param {Event} event @param {number[]} shares @param {any[]} lines @param {string} docid */
  explain(event, shares, lines, docid) {
    const token = /** @type {HTMLElement} */ (event.target);
    if (!token.classList || !token.classList.contains("tok") || token.title) return;
    const i = Number(token.dataset.i);
    const who = lines.filter(({ sets }) => sets.get(docid)?.has(i)).map(({ annotation }) => this.keys.get(annotation.id));
    const share = interpolate(gettext("%(percent)s of annotators highlighted this token"), { percent: `${Math.round((shares[i] ?? 0) * 100)}%` }, true);
    const set = token.dataset.set ? ` · ${interpolate(gettext("set %(set)s"), { set: token.dataset.set }, true)}` : "";
    token.title = `${share}${who.length ? ` (${who.join(", ")})` : ""}${set}`;
  }
}

const root = document.getElementById("item-page");
if (root) {
  const page = new ItemPage(root);
  /** @type {any} */ (window).rationaleItemPage = page;
  const back = /** @type {HTMLAnchorElement|null} */ (document.getElementById("back-to-list"));
  const listed = sessionStorage.getItem(`rw-data-manager-url-${root.dataset.projectId}`);
  if (back && listed && listed.startsWith(`/projects/${root.dataset.projectId}/data/items/`)) back.href = listed;
  page.load();
}
