// @ts-check
// The Perturbations page: progress per type and the check step's figures, the searchable
// list of original items with their counts, and (admins) the project's types and quotas.
// Every server string is inserted as text.

import { formatNumber } from "./format.js";
import { api, el, errorText } from "./http.js";
import { typeDescription, typeName } from "./perturb_parts.js";

const root = /** @type {HTMLElement} */ (document.getElementById("perturbations"));
const projectId = root.dataset.projectId;
const base = `/api/projects/${projectId}/perturbations`;
const canAuthor = root.dataset.canAuthor === "true";
const message = /** @type {HTMLElement} */ (root.querySelector(".message"));
const PAGE = 25;
let offset = 0;

/** @param {string} text @param {string} kind */
function say(text, kind) {
  message.textContent = text;
  message.className = `message ${kind}`;
}

/** @param {string} name @param {string} text */
function figure(name, text) {
  root.querySelectorAll(`[data-figure="${name}"]`).forEach((node) => { node.textContent = text; });
}

/** @param {number} accepted @param {number} pending @param {number} rejected @param {number} target */
function bar(accepted, pending, rejected, target) {
  const box = el("div", undefined, "pt-bar");
  const scale = Math.max(target, accepted + pending + rejected, 1);
  for (const [value, cls] of [[accepted, "accepted"], [pending, "pending"], [rejected, "rejected"]]) {
    const part = el("span", undefined, String(cls));
    part.style.width = `${(100 * Number(value)) / scale}%`;
    box.appendChild(part);
  }
  const counts = { accepted, pending, rejected, target };
  box.title = target ? interpolate(gettext("%(accepted)s accepted, %(pending)s pending, %(rejected)s rejected of %(target)s target"), counts, true)
    : interpolate(gettext("%(accepted)s accepted, %(pending)s pending, %(rejected)s rejected; no target"), counts, true);
  return box;
}

async function loadProgress() {
  const response = await api(`${base}/progress/`, "GET");
  if (!response.ok) return say(errorText(response.data), "error");
  const { types, originals, check } = response.data;
  figure("originals", formatNumber(originals.total));
  figure("below", formatNumber(originals.below_quota));
  figure("per-original", formatNumber(originals.per_original_target));
  figure("pending", formatNumber(check.pending));
  figure("decided", formatNumber(check.decided));
  figure("unchanged", check.accepted_unchanged_share === null ? "–" : `${Math.round(check.accepted_unchanged_share * 100)}%`);
  const pending = document.getElementById("pending-count");
  if (pending) pending.textContent = formatNumber(check.pending);
  const target = types.length ? types[0].target : 0;
  /** @type {HTMLElement} */ (document.getElementById("type-target")).textContent = target
    ? interpolate(gettext("target: %(target)s accepted per type"), { target }, true)
    : gettext("no per-type target set");
  const body = /** @type {HTMLElement} */ (root.querySelector("#progress-types tbody"));
  body.replaceChildren();
  for (const type of types) {
    const row = el("tr");
    row.dataset.type = type.key;
    const name = el("td");
    name.append(el("strong", typeName(type)), type.builtin ? "" : " ", type.builtin ? "" : el("span", gettext("project type"), "badge neutral"));
    const description = typeDescription(type);
    if (description) name.appendChild(el("div", description, "muted small"));
    row.appendChild(name);
    for (const key of ["pending", "accepted", "rejected", "target"]) row.appendChild(el("td", formatNumber(type[key]), "num"));
    const progress = el("td");
    progress.appendChild(bar(type.accepted, type.pending, type.rejected, type.target));
    if (type.target) {
      progress.appendChild(el("div", type.remaining ? interpolate(gettext("%(remaining)s to go"), type, true) : gettext("target met"), "muted small"));
    }
    row.appendChild(progress);
    body.appendChild(row);
  }
}

function authorUrl(/** @type {number} */ itemId) {
  return (root.dataset.authorUrl || "").replace(/\/0\/$/, `/${itemId}/`);
}

async function loadOriginals() {
  const form = /** @type {HTMLFormElement|null} */ (document.getElementById("originals-search"));
  if (!form) return; // a researcher reads the progress only, not the authors' list
  const params = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  const search = String(new FormData(form).get("search") || "").trim();
  if (search) params.set("search", search);
  if (/** @type {HTMLInputElement} */ (form.elements.namedItem("below_quota")).checked) params.set("below_quota", "true");
  const response = await api(`${base}/originals/?${params}`, "GET");
  const body = /** @type {HTMLElement} */ (root.querySelector("#originals tbody"));
  if (!response.ok) return say(errorText(response.data), "error");
  body.replaceChildren();
  if (!response.data.results.length) {
    const row = el("tr");
    const cell = el("td", search ? gettext("No original matches this search.") : gettext("No original items yet: import a dataset first."), "pt-empty");
    cell.setAttribute("colspan", "8");
    row.appendChild(cell);
    body.appendChild(row);
  }
  for (const item of response.data.results) {
    const row = el("tr");
    row.dataset.item = item.annotation_id;
    row.appendChild(el("td", item.annotation_id, "pt-id"));
    const text = el("td", undefined, "pt-snippet");
    text.appendChild(el("div", item.snippet));
    if (item.documents > 1) text.appendChild(el("div", interpolate(gettext("%(documents)s texts"), item, true), "muted small"));
    row.appendChild(text);
    row.appendChild(el("td", item.label ?? "–"));
    row.appendChild(el("td", item.split || "–"));
    for (const key of ["pending", "accepted", "rejected"]) row.appendChild(el("td", formatNumber(item.perturbations[key]), "num"));
    const action = el("td");
    if (canAuthor) {
      const link = /** @type {HTMLAnchorElement} */ (el("a", gettext("Perturb"), "button small"));
      link.href = authorUrl(item.id);
      action.appendChild(link);
    }
    row.appendChild(action);
    body.appendChild(row);
  }
  const count = response.data.count;
  /** @type {HTMLElement} */ (document.getElementById("page-info")).textContent = count
    ? interpolate(gettext("%(first)s–%(last)s of %(count)s"), { first: formatNumber(offset + 1), last: formatNumber(Math.min(offset + PAGE, count)), count: formatNumber(count) }, true)
    : "";
  /** @type {HTMLButtonElement} */ (document.getElementById("prev-page")).disabled = offset === 0;
  /** @type {HTMLButtonElement} */ (document.getElementById("next-page")).disabled = offset + PAGE >= count;
}

// ---------------------------------------------------------------- admins: types and quotas

/** @type {any[]} */ let projectTypes = [];

async function loadSettings() {
  const table = root.querySelector("#project-types tbody");
  if (!table) return;
  const response = await api(`${base}/settings/`, "GET");
  if (!response.ok) return say(errorText(response.data), "error");
  projectTypes = response.data.types.filter((/** @type {any} */ t) => !t.builtin)
    .map((/** @type {any} */ t) => ({ key: t.key, name: t.name, description: t.description }));
  table.replaceChildren();
  if (!projectTypes.length) {
    const row = el("tr");
    const cell = el("td", gettext("None yet: authors can pick the benchmark's three types."), "pt-empty");
    cell.setAttribute("colspan", "4");
    row.appendChild(cell);
    table.appendChild(row);
  }
  for (const type of projectTypes) {
    const row = el("tr");
    row.append(el("td", type.key, "mono"), el("td", type.name), el("td", type.description));
    const remove = /** @type {HTMLButtonElement} */ (el("button", gettext("Remove"), "secondary small"));
    remove.type = "button";
    remove.addEventListener("click", () => saveTypes(projectTypes.filter((t) => t.key !== type.key)));
    const cell = el("td");
    cell.appendChild(remove);
    row.appendChild(cell);
    table.appendChild(row);
  }
}

/** @param {any[]} types */
async function saveTypes(types) {
  const response = await api(`${base}/settings/`, "PATCH", { perturbation_types: types });
  if (!response.ok) return say(errorText(response.data), "error");
  say(gettext("Types saved."), "ok");
  await Promise.all([loadSettings(), loadProgress()]);
  return true;
}

document.getElementById("type-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = /** @type {HTMLFormElement} */ (event.target);
  const data = new FormData(form);
  const added = { key: String(data.get("key")).trim(), name: String(data.get("name")).trim(), description: String(data.get("description")).trim() };
  if (await saveTypes([...projectTypes, added])) form.reset();
});

document.getElementById("quota-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(/** @type {HTMLFormElement} */ (event.target));
  const response = await api(`${base}/settings/`, "PATCH", {
    perturbations_per_original: Number(data.get("perturbations_per_original")),
    perturbations_per_type: Number(data.get("perturbations_per_type")),
  });
  if (!response.ok) return say(errorText(response.data), "error");
  say(gettext("Quotas saved."), "ok");
  await Promise.all([loadProgress(), loadOriginals()]);
});

document.getElementById("originals-search")?.addEventListener("submit", (event) => {
  event.preventDefault();
  offset = 0;
  loadOriginals();
});
document.querySelector("#originals-search input[name=below_quota]")?.addEventListener("change", () => {
  offset = 0;
  loadOriginals();
});
document.getElementById("prev-page")?.addEventListener("click", () => { offset = Math.max(0, offset - PAGE); loadOriginals(); });
document.getElementById("next-page")?.addEventListener("click", () => { offset += PAGE; loadOriginals(); });

Promise.all([loadProgress(), loadOriginals(), loadSettings()]).then(() => { root.dataset.ready = "true"; });
