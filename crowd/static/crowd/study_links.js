// @ts-check
// The project page's crowd section (admins): study links, earnings, hourly pay and the
// completion-token check. Server strings are inserted as text only.
import { api, el, errorText } from "../frontend/http.js";

const found = document.getElementById("crowd-panel");
if (found) {
  // Named again so the functions below see an element, not "element or null".
  const panel = found;
  const base = `/api/projects/${panel.dataset.projectId}`;
  const status = /** @type {HTMLElement} */ (panel.querySelector(".crowd-status"));
  /** @param {string} text @param {boolean} [bad] */
  const say = (text, bad) => { status.textContent = text; status.className = `crowd-status ${bad ? "error" : "muted"}`; };
  /** @param {HTMLElement} row @param {(string|Node)[]} cells */
  const cells = (row, cells) => {
    for (const cell of cells) {
      const td = el("td");
      if (typeof cell === "string") td.textContent = cell; else td.appendChild(cell);
      row.appendChild(td);
    }
    return row;
  };
  const form = /** @type {HTMLFormElement} */ (panel.querySelector("#study-link-form"));
  const tokenForm = /** @type {HTMLFormElement} */ (panel.querySelector("#token-form"));

  /** @param {any} link */
  function payText(link) {
    const c = link.currency;
    const reward = { amount: `${c} ${link.reward_per_session}` };
    const parts = [link.platform === "mturk" ? interpolate(gettext("%(amount)s per HIT"), reward, true)
      : interpolate(gettext("%(amount)s per session"), reward, true)];
    if (Number(link.reward_per_item)) parts.push(interpolate(gettext("+ %(amount)s per item"), { amount: link.reward_per_item }, true));
    if (Number(link.bonus_per_accepted)) parts.push(interpolate(gettext("+ %(amount)s per accepted"), { amount: link.bonus_per_accepted }, true));
    if (Number(link.bonus_per_extra_item)) parts.push(interpolate(gettext("+ %(amount)s per extra item"), { amount: link.bonus_per_extra_item }, true));
    return parts.join(" ");
  }

  /** @param {any} link */
  function linkRow(link) {
    const row = el("tr");
    row.dataset.linkId = String(link.id);
    if (!link.active) row.classList.add("inactive");
    const name = el("div");
    name.appendChild(el("strong", link.name));
    name.appendChild(document.createTextNode(" "));
    name.appendChild(el("span", link.platform_label, `platform-badge ${link.platform}`));
    name.appendChild(el("div", link.variant
      ? interpolate(gettext("variant: %(name)s v%(version)s"), link.variant, true) : gettext("variant: allocated"), "muted small"));
    if (!link.active) name.appendChild(el("div", gettext("inactive: entries are refused"), "muted small"));
    const s = link.sessions;
    const sessions = interpolate(gettext("%(completed)s completed · %(open)s open · %(screened_out)s screened out · %(declined)s declined"),
      { ...s, open: s.working + s.started }, true);
    const url = el("div", undefined, "link-url");
    url.appendChild(el("span", link.platform === "mturk" ? "ExternalQuestion URL" : gettext("Study URL"), "muted small"));
    const input = /** @type {HTMLInputElement} */ (el("input"));
    input.readOnly = true;
    input.value = link.platform_url;
    input.setAttribute("aria-label", interpolate(gettext("URL for %(platform)s"), { platform: link.platform_label }, true));
    const copy = el("button", gettext("Copy"), "quiet");
    copy.type = "button";
    copy.addEventListener("click", async () => {
      input.select();
      try { await navigator.clipboard.writeText(input.value); say(gettext("Copied.")); } catch (_) { say(gettext("Select the URL and copy it.")); }
    });
    url.append(input, copy);
    const actions = el("div", undefined, "actions");
    if (link.platform === "mturk") {
      const xml = /** @type {HTMLAnchorElement} */ (el("a", "ExternalQuestion XML", "quiet button"));
      xml.href = `${base}/crowd/links/${link.id}/external-question/`;
      actions.appendChild(xml);
    }
    const bonuses = /** @type {HTMLAnchorElement} */ (el("a", gettext("Bonus file"), "quiet button"));
    bonuses.href = `${base}/crowd/links/${link.id}/bonuses/`;
    actions.appendChild(bonuses);
    const toggle = el("button", link.active ? gettext("Close") : gettext("Reopen"), "quiet");
    toggle.type = "button";
    toggle.addEventListener("click", async () => {
      const r = await api(`${base}/crowd/links/${link.id}/`, "PATCH", { active: !link.active });
      say(r.ok ? interpolate(r.data.active ? gettext("%(name)s is open.") : gettext("%(name)s is closed."), link, true) : errorText(r.data), !r.ok);
      load();
    });
    actions.appendChild(toggle);
    cells(row, [name, String(link.items_required), payText(link), sessions, actions]);
    // The URL for the platform gets a row of its own: it is long, and it is what is copied.
    const urlRow = el("tr", undefined, "link-url-row");
    urlRow.dataset.linkId = String(link.id);
    const urlCell = el("td");
    urlCell.setAttribute("colspan", "5");
    urlCell.appendChild(url);
    urlRow.appendChild(urlCell);
    return [row, urlRow];
  }

  async function loadLinks() {
    const response = await api(`${base}/crowd/links/`, "GET");
    const tbody = /** @type {HTMLElement} */ (panel.querySelector("#study-links tbody"));
    tbody.replaceChildren();
    if (!response.ok) { say(errorText(response.data), true); return; }
    if (!response.data.length) {
      const row = el("tr");
      const td = el("td", gettext("No study links yet: create one below."), "muted");
      td.setAttribute("colspan", "5");
      row.appendChild(td);
      tbody.appendChild(row);
    }
    const select = /** @type {HTMLSelectElement} */ (tokenForm.elements.namedItem("link"));
    select.replaceChildren();
    for (const link of response.data) {
      tbody.append(...linkRow(link));
      const option = /** @type {HTMLOptionElement} */ (el("option", link.name));
      option.value = String(link.id);
      select.appendChild(option);
    }
    panel.dataset.links = String(response.data.length);
  }

  async function loadVariants() {
    const response = await api(`${base}/variants/`, "GET");
    const select = /** @type {HTMLSelectElement} */ (form.elements.namedItem("variant"));
    if (!response.ok) return say(errorText(response.data), true);
    for (const v of response.data) {
      if (!v.active) continue;
      const option = /** @type {HTMLOptionElement} */ (el("option", `${v.name} v${v.version}`));
      option.value = String(v.id);
      select.appendChild(option);
    }
  }

  /** A table with nothing to show says so, rather than standing as a bare header.
   * @param {HTMLElement} tbody @param {string} text */
  function emptyRow(tbody, text) {
    const cell = /** @type {HTMLTableCellElement} */ (el("td", text, "muted"));
    cell.colSpan = 8;
    tbody.appendChild(el("tr")).appendChild(cell);
  }

  async function loadEarnings() {
    const response = await api(`${base}/crowd/earnings/`, "GET");
    const tbody = /** @type {HTMLElement} */ (panel.querySelector("#crowd-earnings tbody"));
    tbody.replaceChildren();
    if (!response.ok) return say(errorText(response.data), true);
    if (!response.data.workers.length) emptyRow(tbody, gettext("No completed sessions yet."));
    for (const w of response.data.workers) {
      const row = cells(el("tr"), [w.external_id, w.platform, String(w.sessions), String(w.items), String(w.accepted),
        `${w.currency} ${w.base}`, `${w.currency} ${w.bonus}`, `${w.currency} ${w.total}`]);
      [...row.children].slice(5).forEach((td) => td.classList.add("money"));
      tbody.appendChild(row);
    }
  }

  async function loadPay() {
    const response = await api(`${base}/crowd/pay-report/`, "GET");
    if (!response.ok) return say(errorText(response.data), true);
    /** @type {HTMLElement} */ (panel.querySelector("#pay-measure")).textContent = response.data.measure;
    const tbody = /** @type {HTMLElement} */ (panel.querySelector("#pay-report tbody"));
    tbody.replaceChildren();
    for (const [by, rows] of [[gettext("variant"), response.data.by_variant], [gettext("cohort"), response.data.by_cohort]]) {
      for (const g of rows) {
        const money = (/** @type {string|null} */ x) => (x === null ? gettext("n/a") : `${g.currency} ${x}`);
        const row = cells(el("tr"), [by, g.group, String(g.sessions), String(g.workers), String(g.median_minutes),
          money(g.median_total), money(g.median_hourly), money(g.median_hourly_on_items)]);
        [...row.children].slice(5).forEach((td) => td.classList.add("money"));
        tbody.appendChild(row);
      }
    }
    if (!tbody.children.length) emptyRow(tbody, gettext("No completed sessions yet."));
  }

  function showPlatformFields() {
    const platform = /** @type {HTMLSelectElement} */ (form.elements.namedItem("platform")).value;
    form.querySelectorAll("fieldset[data-for]").forEach((fieldset) => {
      const shown = (/** @type {HTMLElement} */ (fieldset).dataset.for || "").split(" ").includes(platform);
      /** @type {HTMLFieldSetElement} */ (fieldset).hidden = !shown;
      /** @type {HTMLFieldSetElement} */ (fieldset).disabled = !shown;
    });
    const currency = /** @type {HTMLInputElement} */ (form.elements.namedItem("currency"));
    if (platform === "mturk") currency.value = "USD";
  }
  /** @type {HTMLSelectElement} */ (form.elements.namedItem("platform")).addEventListener("change", showPlatformFields);
  showPlatformFields();

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    /** @type {Record<string, any>} */ const body = {};
    for (const [key, value] of new FormData(form).entries()) {
      const text = String(value).trim();
      if (key === "variant") body.variant = text ? Number(text) : null;
      else if (key === "items_required" || key === "frame_height") body[key] = Number(text);
      else body[key] = key === "currency" ? text.toUpperCase() : text;
    }
    const r = await api(`${base}/crowd/links/`, "POST", body);
    say(r.ok ? interpolate(gettext("Created %(name)s. Paste its URL into %(platform_label)s."), r.data, true) : errorText(r.data), !r.ok);
    if (r.ok) { form.reset(); showPlatformFields(); load(); }
  });

  tokenForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(tokenForm);
    const out = /** @type {HTMLElement} */ (panel.querySelector(".token-result"));
    const r = await api(`${base}/crowd/links/${data.get("link")}/verify/`, "POST", {
      worker_id: String(data.get("worker_id")).trim(),
      assignment_id: String(data.get("assignment_id")).trim(),
      token: String(data.get("token")).trim(),
    });
    if (!r.ok) { out.textContent = errorText(r.data); out.className = "token-result error"; return; }
    out.textContent = !r.data.valid ? gettext("Not valid: this site did not issue that token for this worker and assignment.")
      : r.data.session ? interpolate(gettext("Valid: issued by this site for a %(status)s session of %(items_done)s items."), r.data.session, true)
        : gettext("Valid: issued by this site.");
    out.className = `token-result ${r.data.valid ? "muted" : "error"}`;
  });

  async function load() {
    await loadLinks();
    await Promise.all([loadEarnings(), loadPay()]);
    panel.dataset.ready = "true";
  }
  loadVariants();
  load();
}
