// @ts-check
// What the two curation pages share around their keys: the shortcuts dialog written in the
// page (opened by "?" or its button, closed by Esc or its button, focus kept inside), and
// whether a key went to a field the curator is typing in.

/** Whether a key press belongs to a field (typing, choosing), not to the page's shortcuts.
 * @param {EventTarget|null} target */
export function typingIn(target) {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName);
}

/** Opens the dialog `id` as a modal, handing focus back where it was when it closes.
 * @param {string} id */
export function openDialog(id) {
  const dialog = /** @type {HTMLDialogElement|null} */ (document.getElementById(id));
  if (!dialog || dialog.open) return;
  const returnTo = document.activeElement;
  dialog.addEventListener("close", () => {
    if (returnTo instanceof HTMLElement) returnTo.focus();
  }, { once: true });
  dialog.showModal();
  /** @type {HTMLElement|null} */ (dialog.querySelector(".close"))?.focus();
}

/** Wires the page's "?" buttons and its dialogs' close buttons and focus trap.
 * @param {HTMLElement} root */
export function bindShortcutsDialog(root) {
  root.querySelectorAll("[data-opens]").forEach((button) => {
    button.addEventListener("click", () => openDialog(String(/** @type {HTMLElement} */ (button).dataset.opens)));
  });
  root.querySelectorAll("dialog").forEach((dialog) => {
    dialog.querySelector(".close")?.addEventListener("click", () => dialog.close());
    dialog.addEventListener("keydown", (event) => {
      if (event.key !== "Tab") return;
      const focusable = [...dialog.querySelectorAll("button, [href], input, select, textarea")];
      const first = /** @type {HTMLElement} */ (focusable[0]);
      const last = /** @type {HTMLElement} */ (focusable[focusable.length - 1]);
      if (event.shiftKey && document.activeElement === first) { event.preventDefault(); last.focus(); }
      else if (!event.shiftKey && document.activeElement === last) { event.preventDefault(); first.focus(); }
    });
  });
}
