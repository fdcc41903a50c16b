// @ts-check
// The column mapping of a Hugging Face dataset on the import form: when a .parquet, .arrow
// or .zip file is chosen, the server reads its columns and first rows (nothing is written)
// and the page shows which column fills which role of an item, the problems, and the first
// items as they would be imported. Changing a column asks again. Everything from the
// server or the file is inserted as text (textContent), never as markup.

import { api, el, errorText } from "./http.js";

/** What each role of an item is called on the page. */
const ROLE = /** @type {Record<string, string>} */ ({
  text: gettext("Text"),
  documents: gettext("Documents (with their tokens)"),
  label: gettext("Label"),
  id: gettext("Id"),
  split: gettext("Split"),
  query: gettext("Query"),
  query_type: gettext("Query type"),
  rationale_spans: gettext("Rationales as token spans"),
  rationale_tokens: gettext("Rationales as token indices"),
  perturbation_of: gettext("Perturbation of"),
  perturbation_types: gettext("Perturbation types"),
  question: gettext("Question"),
  answers: gettext("Answers (text and start character)"),
});
const DATASET_FILE = /\.(parquet|arrow|zip)$/i;

/**
 * @param {HTMLFormElement} form
 * @param {string} url the preview's address
 * @param {boolean} textPair whether the text role takes two columns (a text pair project)
 */
export function hfMapping(form, url, textPair) {
  const fileInput = /** @type {HTMLInputElement} */ (form.querySelector('input[type="file"]'));
  const box = el("section", undefined, "hf-mapping");
  box.hidden = true;
  box.setAttribute("aria-live", "polite");
  form.after(box);
  /** @type {Record<string, any> | null} */ let mapping = null;
  let asked = 0;

  /** @param {Record<string, any> | null} wanted */
  async function preview(wanted) {
    const file = fileInput.files && fileInput.files[0];
    if (!file || !DATASET_FILE.test(file.name)) {
      box.hidden = true;
      mapping = null;
      return;
    }
    const body = new FormData();
    body.append("file", file);
    if (wanted) body.append("mapping", JSON.stringify(wanted));
    const ticket = ++asked;
    box.hidden = false;
    box.replaceChildren(el("p", gettext("Reading the dataset's columns…"), "muted"));
    const response = await api(url, "POST", body);
    if (ticket !== asked) return; // a later choice asked again
    if (!response.ok) {
      // A .zip of an ERASER dataset is not a Hugging Face dataset: no mapping to show.
      if (/\.zip$/i.test(file.name)) {
        box.hidden = true;
        mapping = null;
        return;
      }
      box.replaceChildren(el("p", errorText(response.data), "error"));
      mapping = null;
      return;
    }
    mapping = response.data.mapping;
    render(response.data);
  }

  /** @param {any} data */
  function render(data) {
    box.replaceChildren();
    box.appendChild(el("h3", gettext("Column mapping")));
    box.appendChild(
      el(
        "p",
        interpolate(
          gettext("%(rows)s rows in %(files)s file(s). Choose the column that fills each role; nothing is written until you press Import."),
          { rows: data.rows, files: data.files.length },
          true,
        ),
        "muted",
      ),
    );
    const table = el("table", undefined, "grid hf-mapping-table");
    const head = el("tr");
    head.append(el("th", gettext("Role")), el("th", gettext("Column")));
    table.appendChild(el("thead")).appendChild(head);
    const body = table.appendChild(el("tbody"));
    for (const role of data.roles) {
      const row = el("tr");
      row.appendChild(el("th", ROLE[role] || role));
      const select = /** @type {HTMLSelectElement} */ (el("select"));
      select.name = `mapping-${role}`;
      select.dataset.role = role;
      select.setAttribute("aria-label", ROLE[role] || role);
      const multiple = role === "text" && textPair;
      select.multiple = multiple;
      if (!multiple) select.appendChild(new Option(gettext("(none)"), ""));
      /** @type {string[]} */ const chosen = [].concat(data.mapping[role] || []);
      for (const column of data.columns) {
        const option = new Option(`${column.name} (${column.type})`, column.name);
        option.selected = chosen.includes(column.name);
        select.appendChild(option);
      }
      select.addEventListener("change", () => preview(chosenMapping()));
      row.appendChild(el("td")).appendChild(select);
      body.appendChild(row);
    }
    box.appendChild(table);
    if (data.problems.length) {
      box.appendChild(el("h4", gettext("Problems")));
      const list = el("ul", undefined, "error hf-mapping-problems");
      for (const p of data.problems.slice(0, 20)) {
        const where = `${p.file}${p.line !== null ? " " + interpolate(gettext("row %(row)s"), { row: p.line }, true) : ""}${p.field ? " " + p.field : ""}`;
        list.appendChild(el("li", `${where}: ${p.message}`));
      }
      box.appendChild(list);
    }
    if (data.sample.length) {
      box.appendChild(el("h4", gettext("First items as they would be imported")));
      const sample = el("table", undefined, "grid hf-mapping-sample");
      const top = el("tr");
      // A reading-comprehension project's roles include the answers: show each item's
      // question and gold answer too.
      const reading = data.roles.includes("answers");
      const names = [gettext("Id"), gettext("Split"), gettext("Label"), gettext("Text"), gettext("Rationale sets")];
      if (reading) names.push(gettext("Question"), gettext("Answer"));
      for (const name of names) {
        top.appendChild(el("th", name));
      }
      sample.appendChild(el("thead")).appendChild(top);
      const rows = sample.appendChild(el("tbody"));
      for (const item of data.sample) {
        const row = el("tr");
        row.append(
          el("td", item.id),
          el("td", item.split || gettext("unassigned")),
          el("td", item.label === null ? "—" : item.label),
          el("td", item.texts.join(" ‖ ")),
          el("td", String(item.rationale_sets)),
        );
        if (reading) {
          row.append(
            el("td", item.question === null ? "—" : item.question),
            el("td", item.answer === null ? "—" : item.answer === "" ? gettext("no answer in the passage") : item.answer),
          );
        }
        rows.appendChild(row);
      }
      box.appendChild(sample);
    }
  }

  /** The mapping the selects say: a role left at "(none)" is sent as null, so that the
   * server does not guess it again. */
  function chosenMapping() {
    /** @type {Record<string, any>} */ const chosen = {};
    for (const select of /** @type {NodeListOf<HTMLSelectElement>} */ (box.querySelectorAll("select[data-role]"))) {
      const role = /** @type {string} */ (select.dataset.role);
      if (select.multiple) {
        const values = Array.from(select.selectedOptions, (o) => o.value);
        chosen[role] = values.length === 0 ? null : values.length === 1 ? values[0] : values;
      } else {
        chosen[role] = select.value || null;
      }
    }
    return chosen;
  }

  fileInput.addEventListener("change", () => preview(null));

  return {
    /** The mapping to send with the upload, or null when the file is not such a dataset. */
    mapping: () => (mapping && !box.hidden ? chosenMapping() : null),
    reset: () => {
      box.hidden = true;
      box.replaceChildren();
      mapping = null;
    },
  };
}
