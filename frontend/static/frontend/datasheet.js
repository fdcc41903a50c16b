// @ts-check
// Datasheet page: the admins' statements about a project (annotators, training, pay,
// licence and terms) and a preview of the sheet: the latest finished export's with the
// chosen parameters (the server builds no export for a preview), or, before any, the
// sheet with empty figures and an offer to start the export. Every server string is
// inserted as text, never as HTML: the Markdown is shown as it will be written. The sheet
// itself (its sections, keys and Markdown) is the exported file's English.

import { formatDateTime } from "./format.js";
import { clearFormErrors, showFormErrors } from "./form_errors.js";
import { api, el, errorText } from "./http.js";
import { renderMarkdown } from "./markdown_blocks.js";

const found = document.getElementById("datasheet");
if (found) {
  // Named again so the functions below see an element, not "element or null".
  const root = found;
  const base = `/api/projects/${root.dataset.projectId}/datasheet`;
  const canEdit = root.dataset.canEdit === "1";
  const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
  /** @param {string} text @param {boolean} [bad] */
  const say = (text, bad) => { message.textContent = text; message.className = `message ${bad ? "error" : "ok"}`; };
  const infoForm = /** @type {HTMLFormElement} */ (document.getElementById("datasheet-info"));
  const previewForm = /** @type {HTMLFormElement} */ (document.getElementById("datasheet-preview"));
  const exportStart = /** @type {HTMLButtonElement} */ (document.getElementById("datasheet-export-start"));
  /** Whether the sheet shown is a finished export's, which statements saved now do not change. */
  let fromExport = false;
  const FIELDS = ["annotator_background", "annotator_languages", "annotator_training", "compensation", "licence", "terms_of_use"];

  /** @param {string} name */
  const field = (name) => /** @type {HTMLInputElement} */ (infoForm.elements.namedItem(name));

  async function loadInfo() {
    const response = await api(`${base}/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    for (const name of FIELDS) {
      const value = response.data[name];
      field(name).value = Array.isArray(value) ? value.join(", ") : value || "";
      field(name).readOnly = !canEdit;
    }
    const updated = /** @type {HTMLElement} */ (root.querySelector(".datasheet-updated"));
    updated.textContent = response.data.updated_at
      ? interpolate(gettext("Last saved %(when)s by %(who)s."), { when: formatDateTime(response.data.updated_at), who: response.data.updated_by || "?" }, true)
      : gettext("Nothing stated yet.");
  }

  infoForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    /** @type {Record<string, any>} */ const body = {};
    for (const name of FIELDS) body[name] = field(name).value;
    body.annotator_languages = String(body.annotator_languages).split(",").map((s) => s.trim()).filter(Boolean);
    const response = await api(`${base}/`, "PATCH", body);
    if (response.ok) clearFormErrors(infoForm);
    const saved = fromExport
      ? `${gettext("Datasheet statements saved.")} ${gettext("The next export's sheet carries them.")}`
      : gettext("Datasheet statements saved.");
    say(response.ok ? saved
      : showFormErrors(infoForm, response.data) || gettext("Check the fields marked in the form."), !response.ok);
    if (response.ok) { loadInfo(); preview(); }
  });

  /** A section's value as readable text: scalars as they are, the rest as indented JSON. @param {any} value */
  const shown = (value) => (value !== null && typeof value === "object" ? JSON.stringify(value, null, 2) : String(value));

  /** The preview form's parameters that are filled in. */
  function previewParams() {
    /** @type {[string, string][]} */ const filled = [];
    for (const [key, value] of new FormData(previewForm).entries()) if (String(value).trim()) filled.push([key, String(value).trim()]);
    return filled;
  }

  async function preview() {
    const params = new URLSearchParams(previewParams());
    const response = await api(`${base}/preview/?${params}`, "GET");
    const sections = /** @type {HTMLElement} */ (document.getElementById("datasheet-sections"));
    const markdown = /** @type {HTMLElement} */ (document.getElementById("datasheet-markdown"));
    const note = /** @type {HTMLElement} */ (root.querySelector(".preview-note"));
    if (!response.ok) {
      note.textContent = showFormErrors(previewForm, response.data) || gettext("Check the fields marked in the form.");
      note.className = "preview-note error";
      downloads.hidden = true;
      return;
    }
    clearFormErrors(previewForm);
    const made = response.data.export;
    fromExport = Boolean(made);
    note.textContent = made
      ? interpolate(gettext("The datasheet of export %(id)s, finished %(when)s."), { id: made.id, when: formatDateTime(made.finished_at) }, true)
      : gettext("No export with these parameters has finished yet: the figures below are empty until one does.");
    note.className = "preview-note muted";
    exportStart.hidden = Boolean(made);
    sections.replaceChildren();
    // One collapsible table per section, the Table 6 summary open: the whole sheet is long.
    for (const [section, content] of Object.entries(response.data.json)) {
      const box = /** @type {HTMLDetailsElement} */ (el("details"));
      box.dataset.section = section;
      box.open = section === "collection_summary";
      box.appendChild(el("summary", section.replaceAll("_", " ")));
      const table = el("table", undefined, "grid");
      const entries = content && typeof content === "object" && !Array.isArray(content) ? Object.entries(content) : [["", content]];
      for (const [key, value] of entries) {
        const row = el("tr");
        row.appendChild(el("th", key));
        const cell = el("td");
        cell.appendChild(el("pre", shown(value), "pre datasheet-text"));
        row.appendChild(cell);
        table.appendChild(row);
      }
      box.appendChild(table);
      sections.appendChild(box);
    }
    markdown.textContent = response.data.markdown;
    renderMarkdown(/** @type {HTMLElement} */ (document.getElementById("datasheet-rendered")), response.data.markdown);
    offerDownloads(response.data.markdown, JSON.stringify(response.data.json, null, 2));
  }

  const downloads = /** @type {HTMLElement} */ (document.getElementById("datasheet-downloads"));
  const stem = root.dataset.fileStem || "datasheet";
  /** @type {string[]} */ let fileUrls = [];
  /** The previewed sheet as files the browser saves, named after the project.
   * @param {string} markdownText @param {string} jsonText */
  function offerDownloads(markdownText, jsonText) {
    fileUrls.forEach((url) => URL.revokeObjectURL(url));
    fileUrls = [];
    for (const [id, text, type, name] of [
      ["datasheet-download-md", markdownText, "text/markdown", `${stem}-datasheet.md`],
      ["datasheet-download-json", jsonText + "\n", "application/json", `${stem}-datasheet.json`],
    ]) {
      const link = /** @type {HTMLAnchorElement} */ (document.getElementById(id));
      const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
      fileUrls.push(url);
      link.href = url;
      link.download = name;
    }
    downloads.hidden = false;
  }

  /** Polls a started export until it ends, then previews its sheet. @param {number} id */
  async function followExport(id) {
    const response = await api(`/api/projects/${root.dataset.projectId}/exports/${id}/`, "GET");
    if (response.ok && (response.data.status === "pending" || response.data.status === "running")) {
      window.setTimeout(() => followExport(id), 1500);
      return;
    }
    exportStart.disabled = false;
    if (!response.ok) return say(errorText(response.data), true);
    if (response.data.status !== "succeeded") {
      return say(interpolate(gettext("Export %(id)s did not finish: %(error)s"), { id, error: response.data.error || response.data.status }, true), true);
    }
    preview();
  }

  exportStart.addEventListener("click", async () => {
    exportStart.disabled = true;
    const response = await api(`/api/projects/${root.dataset.projectId}/exports/`, "POST", Object.fromEntries(previewParams()));
    if (!response.ok) {
      exportStart.disabled = false;
      return say(showFormErrors(previewForm, response.data) || errorText(response.data), true);
    }
    say(interpolate(gettext("Export %(id)s started."), { id: response.data.id }, true));
    followExport(response.data.id);
  });

  previewForm.addEventListener("submit", (event) => { event.preventDefault(); preview(); });
  loadInfo();
  preview();
}
