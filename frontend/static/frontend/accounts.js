// @ts-check
// The project's members page and the staff's users page: create an account (invitation link
// or one-time password, shown once), reset a password, deactivate or reactivate, and the
// accounts' audit trail. Every action goes to the account API named by the panel's data-api;
// the server says per account what the caller may not do and why, and the buttons follow.

import { formatDateTime } from "./format.js";
import { api, el, errorText } from "./http.js";

const panel = /** @type {HTMLElement} */ (document.getElementById("accounts-panel"));
const base = String(panel.dataset.api);
const inProject = panel.dataset.projectId !== undefined;
const PAGE = 25;

/** @typedef {{password_reset: string|null, deactivate: string|null, reactivate: string|null,
 *   membership?: string|null}} Refusals */
/** @typedef {{id: number, username: string, email: string, is_active: boolean, is_staff: boolean,
 *   is_superuser: boolean, last_login: string|null, date_joined: string, sign_in: string,
 *   roles?: string[], refusals: Refusals}} Account */

const ROLES = /** @type {Record<string, string>} */ ({
  admin: gettext("admin"),
  researcher: gettext("researcher"),
  reviewer: gettext("reviewer"),
  annotator: gettext("annotator"),
  author: gettext("perturbation author"),
  checker: gettext("perturbation checker"),
  curator: gettext("curator"),
});
const SIGN_IN = /** @type {Record<string, string>} */ ({
  password: gettext("own password"),
  change_due: gettext("one-time password, not yet changed"),
  link: gettext("waiting for a link to be used"),
  platform: gettext("through a crowd platform"),
});
const ACTIONS = /** @type {Record<string, string>} */ ({
  account_create: gettext("created the account"),
  password_reset: gettext("reset the password"),
  deactivate: gettext("deactivated"),
  reactivate: gettext("reactivated"),
  password_set: gettext("set a password from a link"),
  password_change: gettext("changed the password"),
  member_add: gettext("added to the project"),
});
// The project's members base: /api/projects/<id>/members/<user id>/ (qc/lifecycle_apis.py).
const membersBase = inProject ? `/api/projects/${panel.dataset.projectId}/members/` : "";

const statusLine = /** @type {HTMLElement} */ (panel.querySelector(".account-status"));
const issuedBox = /** @type {HTMLElement} */ (document.getElementById("account-issued"));

/** @param {string} text @param {boolean} [bad] */
function say(text, bad = false) {
  statusLine.textContent = text;
  statusLine.className = `account-status ${bad ? "error" : "muted"}`;
}

/** @param {string|null} iso */
function when(iso) {
  return iso ? formatDateTime(iso) : gettext("never");
}

/** Shown once: what the admin passes on to the account's owner.
 * @param {string} username @param {any} data */
function showIssued(username, data) {
  issuedBox.replaceChildren();
  issuedBox.hidden = false;
  const secret = data.one_time_password || data.link;
  issuedBox.append(el("p", data.one_time_password
    ? interpolate(gettext("One-time password for %(username)s. It is shown only now: pass it on, and they choose their own when they sign in."), { username }, true)
    : interpolate(gettext("Link for %(username)s to choose a password, valid until %(until)s and only once. It is shown only now: pass it on."), { username, until: when(data.link_expires_at) }, true)));
  const row = el("p", undefined, "issued-secret");
  const value = el("input");
  value.readOnly = true;
  value.value = secret;
  value.id = "issued-value";
  value.setAttribute("aria-label", data.one_time_password ? gettext("One-time password") : gettext("Link"));
  const copy = el("button", gettext("Copy"));
  copy.type = "button";
  copy.addEventListener("click", async () => {
    value.select();
    try {
      await navigator.clipboard.writeText(secret);
      copy.textContent = gettext("Copied");
    } catch (_) {
      copy.textContent = gettext("Select and copy it by hand");
    }
  });
  row.append(value, copy);
  issuedBox.append(row);
  value.focus();
  value.select();
}

// ---------------------------------------------------------------- the account list

let accountsOffset = 0;
let accountsQuery = "";

/** @param {string} label @param {string|null} refusal @param {() => Promise<void>} action @param {string} [cls] */
function actionButton(label, refusal, action, cls = "secondary") {
  const button = el("button", label, cls);
  button.type = "button";
  if (refusal) {
    button.disabled = true;
    button.title = refusal;
  } else {
    button.addEventListener("click", () => { button.disabled = true; action().finally(() => { button.disabled = false; }); });
  }
  return button;
}

/** @param {Account} account */
function accountActions(account) {
  const cell = el("td");
  const buttons = el("div", undefined, "account-actions");
  cell.append(buttons);
  const url = `${base}${account.id}/`;
  const reset = async (/** @type {string} */ credential) => {
    const r = await api(`${url}password/`, "POST", { credential });
    if (!r.ok) return say(errorText(r.data), true);
    showIssued(account.username, r.data);
    say(interpolate(gettext("Password of %(username)s reset."), { username: account.username }, true));
    loadAll();
  };
  buttons.append(
    actionButton(gettext("New one-time password"), account.refusals.password_reset, () => reset("one_time_password")),
    actionButton(gettext("New link"), account.refusals.password_reset, () => reset("link")),
  );
  if (inProject) buttons.append(...membershipActions(account, cell));
  if (account.is_active) {
    buttons.append(actionButton(gettext("Deactivate"), account.refusals.deactivate, async () => {
      const question = interpolate(gettext("Deactivate %(username)s? They are signed out and cannot sign in until reactivated."), { username: account.username }, true);
      if (!window.confirm(question)) return;
      await setActive(account, false);
    }, "danger"));
  } else {
    buttons.append(actionButton(gettext("Reactivate"), account.refusals.reactivate, () => setActive(account, true)));
  }
  const reasons = [...new Set(Object.values(account.refusals).filter(Boolean))];
  if (reasons.length) buttons.append(el("p", reasons.join("; "), "muted small refusal-reason"));
  return cell;
}

/** Change the member's roles (a checkbox per role, saved at once) or remove them.
 * @param {Account} account @param {HTMLElement} cell */
function membershipActions(account, cell) {
  const refusal = account.refusals.membership ?? null;
  const url = `${membersBase}${account.id}/`;
  const edit = actionButton(gettext("Change roles"), refusal, async () => {
    const open = cell.querySelector(".role-editor");
    if (open) return open.remove();
    const editor = el("form", undefined, "role-editor");
    editor.setAttribute("aria-label", interpolate(gettext("Roles of %(username)s"), { username: account.username }, true));
    for (const [role, label] of Object.entries(ROLES)) {
      const box = el("input");
      box.type = "checkbox";
      box.name = "role";
      box.value = role;
      box.checked = (account.roles || []).includes(role);
      const line = el("label");
      line.append(box, ` ${label}`);
      editor.append(line);
    }
    const save = el("button", gettext("Save roles"), "small");
    save.type = "submit";
    editor.append(save);
    editor.addEventListener("submit", async (event) => {
      event.preventDefault();
      const roles = [...editor.querySelectorAll("input[name=role]:checked")].map((box) => /** @type {HTMLInputElement} */ (box).value);
      const r = await api(url, "PUT", { roles });
      if (!r.ok) return say(errorText(r.data), true);
      say(interpolate(gettext("Roles of %(username)s: %(roles)s."), { username: account.username, roles: r.data.roles.map((/** @type {string} */ role) => ROLES[role] ?? role).join(", ") }, true));
      loadAll();
    });
    cell.append(editor);
    /** @type {HTMLElement} */ (editor.querySelector("input"))?.focus();
  });
  const remove = actionButton(gettext("Remove from project"), refusal, async () => {
    const question = interpolate(gettext("Remove %(username)s from this project? Their annotations and reviews stay, under their name; their open items go back to the others. They keep their account."), { username: account.username }, true);
    if (!window.confirm(question)) return;
    const r = await api(url, "DELETE");
    if (!r.ok) return say(errorText(r.data), true);
    say(interpolate(gettext("%(username)s removed from the project."), { username: account.username }, true));
    loadAll();
  }, "danger");
  return [edit, remove];
}

/** @param {Account} account @param {boolean} active */
async function setActive(account, active) {
  const r = await api(`${base}${account.id}/active/`, "POST", { active });
  if (!r.ok) return say(errorText(r.data), true);
  say(interpolate(active ? gettext("%(username)s reactivated.") : gettext("%(username)s deactivated."), { username: account.username }, true));
  loadAll();
}

/** @param {HTMLElement} nav @param {number} count @param {number} offset @param {(offset: number) => void} go */
function pager(nav, count, offset, go) {
  nav.replaceChildren();
  if (count <= PAGE) return;
  const previous = el("button", gettext("Previous"), "secondary");
  previous.type = "button";
  previous.disabled = offset === 0;
  previous.addEventListener("click", () => go(Math.max(0, offset - PAGE)));
  const next = el("button", gettext("Next"), "secondary");
  next.type = "button";
  next.disabled = offset + PAGE >= count;
  next.addEventListener("click", () => go(offset + PAGE));
  const where = el("span", interpolate(gettext("%(first)s–%(last)s of %(count)s"), { first: offset + 1, last: Math.min(count, offset + PAGE), count }, true), "muted");
  nav.append(previous, where, next);
}

/** @param {HTMLTableElement} table @param {string[]} headings */
function head(table, headings) {
  const row = el("tr");
  for (const heading of headings) row.append(el("th", heading));
  table.tHead?.replaceChildren(row);
}

async function loadAccounts() {
  const table = /** @type {HTMLTableElement} */ (document.getElementById("accounts"));
  const r = await api(`${base}?limit=${PAGE}&offset=${accountsOffset}${accountsQuery}`, "GET");
  if (!r.ok) return say(errorText(r.data), true);
  head(table, [gettext("User"), gettext("Email"), inProject ? gettext("Roles here") : gettext("Staff"), gettext("Status"),
    gettext("Signs in with"), gettext("Last login"), gettext("Actions")]);
  const body = /** @type {HTMLTableSectionElement} */ (table.tBodies[0]);
  body.replaceChildren(...r.data.results.map((/** @type {Account} */ account) => {
    const row = el("tr");
    row.dataset.username = account.username;
    const third = inProject
      ? (account.roles || []).map((role) => ROLES[role] ?? role).join(", ")
      : account.is_superuser ? gettext("superuser") : account.is_staff ? gettext("staff") : "";
    row.append(
      el("td", account.username),
      el("td", account.email),
      el("td", third),
      el("td", account.is_active ? gettext("active") : gettext("deactivated"), account.is_active ? "" : "status-deactivated"),
      el("td", SIGN_IN[account.sign_in] ?? account.sign_in),
      el("td", when(account.last_login)),
      accountActions(account),
    );
    return row;
  }));
  if (!r.data.results.length) {
    const empty = el("td", gettext("No accounts match."), "muted");
    empty.colSpan = 7;
    const row = el("tr");
    row.append(empty);
    body.append(row);
  }
  pager(/** @type {HTMLElement} */ (document.getElementById("accounts-pager")), r.data.count, accountsOffset,
    (offset) => { accountsOffset = offset; loadAccounts(); });
}

// ---------------------------------------------------------------- the audit trail

let eventsOffset = 0;

async function loadEvents() {
  const table = /** @type {HTMLTableElement} */ (document.getElementById("account-events"));
  const r = await api(`${base}events/?limit=${PAGE}&offset=${eventsOffset}`, "GET");
  if (!r.ok) return say(errorText(r.data), true);
  const headings = [gettext("When"), gettext("Who"), gettext("Did"), gettext("To whom"), gettext("How")];
  if (!inProject) headings.push(gettext("Project"));
  head(table, headings);
  const body = /** @type {HTMLTableSectionElement} */ (table.tBodies[0]);
  body.replaceChildren(...r.data.results.map((/** @type {any} */ event) => {
    const row = el("tr");
    const detail = String(event.detail || "").split(", ").map((part) => ROLES[part] ?? part).join(", ");
    row.append(el("td", when(event.created_at)), el("td", event.actor ?? gettext("(deleted account)")),
      el("td", ACTIONS[event.action] ?? event.action), el("td", event.subject), el("td", detail));
    if (!inProject) row.append(el("td", event.project ?? ""));
    return row;
  }));
  if (!r.data.results.length) {
    const empty = el("td", gettext("No account action yet."), "muted");
    empty.colSpan = headings.length;
    const row = el("tr");
    row.append(empty);
    body.append(row);
  }
  pager(/** @type {HTMLElement} */ (document.getElementById("account-events-pager")), r.data.count, eventsOffset,
    (offset) => { eventsOffset = offset; loadEvents(); });
}

function loadAll() {
  return Promise.all([loadAccounts(), loadEvents()]);
}

// ---------------------------------------------------------------- forms

const createForm = /** @type {HTMLFormElement} */ (document.getElementById("account-create-form"));
createForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  for (const slot of createForm.querySelectorAll(".field-error")) slot.textContent = "";
  const form = new FormData(createForm);
  /** @type {Record<string, any>} */ const body = {
    username: String(form.get("username") || "").trim(),
    email: String(form.get("email") || "").trim(),
    credential: form.get("credential"),
  };
  if (form.get("role")) body.role = form.get("role");
  if (form.get("project")) body.project = Number(form.get("project"));
  const r = await api(base, "POST", body);
  if (!r.ok) {
    // Each message beside its field where there is one; the rest in the status line.
    const field = r.data && (r.data.field || Object.keys(r.data).find((key) => createForm.querySelector(`[data-field="${key}"]`)));
    const slot = field ? createForm.querySelector(`[data-field="${field}"]`) : null;
    if (slot) {
      // A rule's message names its field first ("username: ..."); beside the field it need not.
      const detail = typeof r.data.detail === "string" ? r.data.detail.replace(`${field}: `, "") : null;
      slot.textContent = detail ?? [].concat(r.data[field]).join(" ");
      say(gettext("The account was not created; see the message beside the field."), true);
    } else {
      say(errorText(r.data), true);
    }
    return;
  }
  showIssued(r.data.account.username, r.data);
  say(interpolate(gettext("Account %(username)s created."), { username: r.data.account.username }, true));
  createForm.reset();
  loadAll();
});

const filterForm = /** @type {HTMLFormElement|null} */ (document.getElementById("account-filter-form"));
filterForm?.addEventListener("submit", (event) => {
  event.preventDefault();
  const params = new URLSearchParams();
  for (const [key, value] of new FormData(filterForm)) if (value) params.set(key, String(value));
  accountsQuery = params.size ? `&${params}` : "";
  accountsOffset = 0;
  loadAccounts();
});

loadAll().then(() => { panel.dataset.ready = "true"; });
