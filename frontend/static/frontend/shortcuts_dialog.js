// @ts-check
// A page's keyboard shortcuts in a modal dialog, as the workspace shows its own: a table of
// keys and what they do, focus kept inside (Tab goes round), Esc or Close ends it and the
// focus goes back where it was.

import { el } from "./http.js";

/** @typedef {[string[], string]} ShortcutRow */

/** Opens the page's dialog, made on first use. @param {string} id @param {ShortcutRow[]} rows
 * @param {string} [note] */
export function shortcutsOpen(id, rows, note) {
  let dialog = /** @type {HTMLDialogElement|null} */ (document.getElementById(id));
  if (!dialog) {
    dialog = shortcutsDialog(id, rows, note);
    document.body.appendChild(dialog);
  }
  if (dialog.open) return;
  const returnTo = document.activeElement;
  dialog.addEventListener("close", () => {
    if (returnTo instanceof HTMLElement) returnTo.focus();
  }, { once: true });
  dialog.showModal();
  /** @type {HTMLElement|null} */ (dialog.querySelector(".close"))?.focus();
}

/** @param {string} id @param {ShortcutRow[]} rows @param {string} [note] */
function shortcutsDialog(id, rows, note) {
  const dialog = /** @type {HTMLDialogElement} */ (el("dialog", undefined, "shortcuts-dialog"));
  dialog.id = id;
  dialog.setAttribute("aria-modal", "true");
  dialog.setAttribute("aria-labelledby", `${id}-title`);
  const head = el("header");
  const title = el("h2", gettext("Keyboard shortcuts"));
  title.id = `${id}-title`;
  const close = el("button", gettext("Close (Esc)"), "close");
  close.type = "button";
  close.addEventListener("click", () => dialog.close());
  head.append(title, close);
  const table = el("table");
  for (const [keys, what] of rows) {
    const row = el("tr");
    const keyCell = el("th");
    keyCell.setAttribute("scope", "row");
    keys.forEach((key, n) => {
      if (n) keyCell.appendChild(document.createTextNode(" "));
      keyCell.appendChild(el("kbd", key));
    });
    row.append(keyCell, el("td", what));
    table.appendChild(row);
  }
  dialog.append(head, table);
  if (note) dialog.appendChild(el("p", note, "muted dialog-note"));
  dialog.addEventListener("keydown", (event) => {
    if (event.key !== "Tab") return;
    const focusable = [...dialog.querySelectorAll("button, [href], input, select, textarea")];
    const first = /** @type {HTMLElement} */ (focusable[0]);
    const last = /** @type {HTMLElement} */ (focusable[focusable.length - 1]);
    if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
    else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
  });
  return dialog;
}
