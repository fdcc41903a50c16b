// @ts-check
// The settings page's "Archive or delete the project" card, and the home page's "Deleted
// projects" list: archive and unarchive, delete after typing the project's name, restore.
// Names and messages from the server are inserted as text, never as markup.

import { api, errorText } from "./http.js";

const panel = document.getElementById("lifecycle-panel");
if (panel) {
  const base = `/api/projects/${panel.dataset.projectId}/`;
  const name = String(panel.dataset.projectName);
  const status = /** @type {HTMLElement} */ (panel.querySelector(".lifecycle-status"));
  /** @param {string} text @param {boolean} [bad] */
  const say = (text, bad = false) => {
    status.textContent = text;
    status.className = `lifecycle-status ${bad ? "error" : "muted"}`;
  };

  const toggle = /** @type {HTMLButtonElement} */ (panel.querySelector("#archive-toggle"));
  toggle.addEventListener("click", async () => {
    const archived = panel.dataset.archived === "true";
    if (!archived && !window.confirm(gettext("Archive this project? It becomes read-only and leaves the annotators' lists; their open leases end. You can unarchive it at any time."))) return;
    toggle.disabled = true;
    const r = await api(`${base}${archived ? "unarchive" : "archive"}/`, "POST");
    if (!r.ok) {
      toggle.disabled = false;
      return say(errorText(r.data), true);
    }
    window.location.reload();
  });

  const dialog = /** @type {HTMLDialogElement} */ (panel.querySelector("#project-delete-dialog"));
  const form = /** @type {HTMLFormElement} */ (panel.querySelector("#project-delete-form"));
  const typed = /** @type {HTMLInputElement} */ (form.querySelector("input[name=confirm_name]"));
  const confirmButton = /** @type {HTMLButtonElement} */ (form.querySelector("#project-delete-confirm"));
  const error = /** @type {HTMLElement} */ (form.querySelector("#project-delete-error"));
  typed.addEventListener("input", () => { confirmButton.disabled = typed.value !== name; error.textContent = ""; });
  /** @type {HTMLElement} */ (panel.querySelector("#project-delete-open")).addEventListener("click", () => {
    form.reset();
    confirmButton.disabled = true;
    error.textContent = "";
    dialog.showModal();
    typed.focus();
  });
  /** @type {HTMLElement} */ (form.querySelector("#project-delete-cancel")).addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    confirmButton.disabled = true;
    const r = await api(`${base}delete/`, "POST", { confirm_name: typed.value });
    if (!r.ok) {
      confirmButton.disabled = false;
      error.textContent = errorText(r.data);
      return;
    }
    window.location.assign("/?deleted=" + encodeURIComponent(String(panel.dataset.projectId)));
  });
}

const deleted = document.getElementById("deleted-projects");
if (deleted) {
  const status = /** @type {HTMLElement} */ (deleted.querySelector(".deleted-status"));
  for (const button of deleted.querySelectorAll("button[data-restore]")) {
    button.addEventListener("click", async () => {
      const target = /** @type {HTMLButtonElement} */ (button);
      target.disabled = true;
      const r = await api(`/api/projects/${target.dataset.restore}/restore/`, "POST");
      if (!r.ok) {
        target.disabled = false;
        status.textContent = errorText(r.data);
        status.className = "deleted-status error";
        return;
      }
      window.location.reload();
    });
  }
}
