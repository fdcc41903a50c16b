// @ts-check
// Authoring a perturbation of one original item: types, an edited copy of every text with
// the word diff shown live, the gold result, then a pending draft for a checker.

import { formatDateTime } from "./format.js";
import { api, el, errorText } from "./http.js";
import {
  allowedLabels,
  answerText,
  goldEditor,
  markInvalid,
  statusBadge,
  textEditor,
  typeBadges,
  typePicker,
} from "./perturb_parts.js";

const root = /** @type {HTMLElement} */ (document.getElementById("perturb-author"));
const base = `/api/projects/${root.dataset.projectId}/perturbations`;
const itemId = Number(root.dataset.itemId);
const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
const save = /** @type {HTMLButtonElement} */ (document.getElementById("save-perturbation"));
const hint = /** @type {HTMLElement} */ (document.getElementById("save-hint"));

/** @type {any} */ let settings;
/** @type {any} */ let original;
/** @type {ReturnType<typeof typePicker>} */ let picker;
/** @type {Array<ReturnType<typeof textEditor>>} */ let editors = [];
/** @type {ReturnType<typeof textEditor>|null} */ let queryEditor = null;
/** @type {ReturnType<typeof goldEditor>} */ let gold;

/** @param {string} text @param {string} kind */
function say(text, kind) {
  message.textContent = text;
  message.className = `message ${kind}`;
}

function refreshSave() {
  const types = picker ? picker.value().length : 0;
  const changed = [...editors, ...(queryEditor ? [queryEditor] : [])].some((e) => e.words());
  save.disabled = !types || !changed;
  hint.textContent = !types ? gettext("Pick at least one type.") : !changed ? gettext("Change at least one word.") : "";
}

function renderExisting() {
  const body = /** @type {HTMLElement} */ (root.querySelector("#existing-perturbations tbody"));
  body.replaceChildren();
  if (!original.perturbations.length) {
    const row = el("tr");
    const cell = el("td", gettext("None yet."), "pt-empty");
    cell.setAttribute("colspan", "7");
    row.appendChild(cell);
    body.appendChild(row);
  }
  for (const p of original.perturbations) {
    const row = el("tr");
    row.dataset.perturbation = String(p.id);
    row.appendChild(el("td", `#${p.id}`));
    const types = el("td");
    types.appendChild(typeBadges(p.types, settings.types));
    row.appendChild(types);
    const status = el("td");
    status.appendChild(statusBadge(p.status));
    row.appendChild(status);
    row.append(el("td", p.label ?? "–"), el("td", p.author), el("td", formatDateTime(p.created_at)));
    row.appendChild(el("td", p.item ?? "–", "pt-id"));
    body.appendChild(row);
  }
}

function render() {
  /** @type {HTMLElement} */ (document.getElementById("item-split")).textContent = interpolate(gettext("split: %(split)s"), { split: original.split || gettext("none") }, true);
  picker = typePicker(settings.types, [], refreshSave);
  /** @type {HTMLElement} */ (document.getElementById("types")).replaceWith(picker.node);
  picker.node.id = "types";
  const texts = /** @type {HTMLElement} */ (document.getElementById("texts"));
  editors = original.documents.map((/** @type {any} */ doc) => {
    const editor = textEditor({ name: doc.name, original: doc.text, value: doc.text, position: doc.position, onChange: refreshSave });
    texts.appendChild(editor.node);
    return editor;
  });
  if (original.query_mode === "free") {
    queryEditor = textEditor({ name: gettext("Query"), original: original.query, value: original.query, position: "query", onChange: refreshSave });
    texts.appendChild(queryEditor.node);
  }
  gold = goldEditor({
    taskType: settings.task_type,
    labels: allowedLabels(settings, original),
    original,
    label: original.label,
    answer: original.answer,
    onChange: refreshSave,
  });
  const goldBox = /** @type {HTMLElement} */ (document.getElementById("gold"));
  goldBox.replaceChildren(gold.node);
  const values = { label: original.label ?? gettext("no label"), answer: answerText(original.answer) };
  const note = el("p", interpolate(settings.task_type === "reading_comprehension"
    ? gettext("The original's gold: %(label)s; answer: %(answer)s. Most perturbations keep it; important-word changes may not.")
    : gettext("The original's gold: %(label)s. Most perturbations keep it; important-word changes may not."), values, true), "muted small");
  goldBox.appendChild(note);
  renderExisting();
  refreshSave();
}

async function submit() {
  if (save.disabled) return;
  save.disabled = true;
  root.querySelectorAll(".invalid").forEach((node) => node.classList.remove("invalid"));
  /** @type {Record<string, any>} */ const body = {
    original: itemId,
    types: picker.value(),
    texts: editors.map((e) => e.value()),
    label: gold.label(),
  };
  if (queryEditor) body.query = queryEditor.value();
  const answer = gold.answer();
  if (answer) body.answer = answer;
  const response = await api(`${base}/`, "POST", body);
  if (!response.ok) {
    say(errorText(response.data), "error");
    markInvalid(root, response.data);
    refreshSave();
    return;
  }
  root.dataset.lastSaved = String(response.data.id);
  say(interpolate(gettext("Saved perturbation #%(id)s: it waits for a checker. Edit the copy again to write another."), response.data, true), "ok");
  const fresh = await api(`${base}/originals/${itemId}/`, "GET");
  if (fresh.ok) {
    original.perturbations = fresh.data.perturbations;
    renderExisting();
  } else {
    // Saved all the same: only the list of this original's perturbations is out of date.
    say(interpolate(gettext("Saved perturbation #%(id)s, but the list below could not be refreshed: %(error)s"),
      { id: response.data.id, error: errorText(fresh.data) }, true), "error");
  }
  refreshSave();
}

save.addEventListener("click", submit);
document.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    submit();
  }
});

Promise.all([api(`${base}/settings/`, "GET"), api(`${base}/originals/${itemId}/`, "GET")]).then(([s, o]) => {
  if (!s.ok || !o.ok) {
    say(errorText((!s.ok ? s : o).data), "error");
    return;
  }
  settings = s.data;
  original = o.data;
  render();
  root.dataset.ready = "true";
});
