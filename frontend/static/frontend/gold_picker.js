// @ts-check
// Picking the qualification test's gold items from the project's items: a search over ids
// and text, a page of results at a time, the chosen items as removable chips, and one save.
// Items without a reference rationale, or already served as ordinary work, cannot be gold:
// they are listed with the reason and cannot be added.

import { api, el, errorText } from "./http.js";

const PAGE = 10;

/** @param {HTMLElement} root @param {string} qc the project's QC API prefix
 * @param {(text: string, bad: boolean) => void} say */
export function goldPicker(root, qc, say) {
  /** @type {string[]} */ let chosen = [];
  let offset = 0;
  let search = "";
  let timer = 0;

  root.replaceChildren();
  root.appendChild(el("p", gettext("Search the project's items by id or by words of their text, add the ones to test with, then save. Gold items need a reference rationale and must not have been served as ordinary work."), "muted"));
  const chips = el("ul", undefined, "gold-chosen");
  chips.setAttribute("aria-label", gettext("Chosen gold items"));
  root.appendChild(chips);
  const bar = el("div", undefined, "gold-search-bar");
  const field = /** @type {HTMLInputElement} */ (el("input"));
  field.type = "search";
  field.name = "gold_search";
  field.placeholder = gettext("Search items by id or text…");
  field.setAttribute("aria-label", gettext("Search items by id or text"));
  field.setAttribute("aria-controls", "gold-results");
  const save = el("button", gettext("Save gold items"), "primary gold-save");
  save.type = "button";
  bar.append(field, save);
  root.appendChild(bar);
  const results = el("table", undefined, "grid gold-results");
  results.id = "gold-results";
  root.appendChild(results);
  const pager = el("div", undefined, "gold-pager");
  root.appendChild(pager);

  function renderChosen() {
    chips.replaceChildren();
    if (!chosen.length) chips.appendChild(el("li", gettext("No gold items chosen yet."), "muted"));
    for (const id of chosen) {
      const chip = el("li", undefined, "gold-chip");
      chip.dataset.item = id;
      chip.appendChild(el("span", id));
      const remove = el("button", "×", "gold-remove");
      remove.type = "button";
      remove.setAttribute("aria-label", interpolate(gettext("Remove %(item)s from the gold items"), { item: id }, true));
      remove.addEventListener("click", () => { chosen = chosen.filter((c) => c !== id); renderChosen(); load(); });
      chip.appendChild(remove);
      chips.appendChild(chip);
    }
  }

  async function load() {
    const query = new URLSearchParams({ search, limit: String(PAGE), offset: String(offset) });
    const response = await api(`${qc}/gold-items/choices/?${query}`, "GET");
    if (!response.ok) { say(errorText(response.data), true); return; }
    results.replaceChildren();
    const head = el("tr");
    [gettext("Item"), gettext("Text"), gettext("Label"), ""].forEach((h) => head.appendChild(el("th", h)));
    results.appendChild(head);
    for (const item of response.data.results) {
      const row = el("tr");
      row.dataset.item = item.annotation_id;
      row.appendChild(el("td", item.annotation_id, "mono-id"));
      row.appendChild(el("td", item.preview, "gold-preview"));
      row.appendChild(el("td", item.label ?? ""));
      const cell = el("td");
      const taken = chosen.includes(item.annotation_id);
      const why = !item.has_reference ? gettext("no reference rationale") : item.served ? gettext("already served as work") : "";
      if (why) cell.appendChild(el("span", why, "muted gold-why"));
      else {
        const add = el("button", taken ? gettext("Added") : gettext("Add"), taken ? "secondary" : "");
        add.type = "button";
        add.disabled = taken;
        add.setAttribute("aria-label", interpolate(gettext("Add %(item)s to the gold items"), { item: item.annotation_id }, true));
        add.addEventListener("click", () => { chosen.push(item.annotation_id); renderChosen(); load(); });
        cell.appendChild(add);
      }
      row.appendChild(cell);
      results.appendChild(row);
    }
    if (!response.data.results.length) {
      const row = el("tr");
      const cell = el("td", search ? interpolate(gettext("No item matches “%(search)s”."), { search }, true) : gettext("This project has no items yet."), "muted");
      cell.colSpan = 4;
      row.appendChild(cell);
      results.appendChild(row);
    }
    pager.replaceChildren();
    const count = response.data.count;
    pager.appendChild(el("span", count ? interpolate(gettext("%(first)s–%(last)s of %(count)s"), {
      first: offset + 1, last: offset + response.data.results.length, count,
    }, true) : "", "muted"));
    for (const [text, to, enabled] of /** @type {[string, number, boolean][]} */ ([
      [gettext("Previous"), Math.max(offset - PAGE, 0), offset > 0],
      [gettext("Next"), offset + PAGE, offset + PAGE < count],
    ])) {
      const button = el("button", text, "secondary");
      button.type = "button";
      button.disabled = !enabled;
      button.addEventListener("click", () => { offset = to; load(); });
      pager.appendChild(button);
    }
    root.dataset.ready = "true";
  }

  field.addEventListener("input", () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => { search = field.value.trim(); offset = 0; load(); }, 250);
  });
  save.addEventListener("click", async () => {
    const response = await api(`${qc}/gold-items/`, "PUT", { annotation_ids: chosen });
    if (!response.ok) { say(errorText(response.data), true); return; }
    chosen = [...response.data.gold_items];
    renderChosen();
    load();
    say(chosen.length ? interpolate(gettext("Gold items: %(items)s."), { items: chosen.join(", ") }, true)
      : gettext("The test has no gold items now."), false);
  });

  return {
    /** @param {string[]} ids */
    show(ids) { chosen = [...ids]; renderChosen(); load(); },
  };
}
