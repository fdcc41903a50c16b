// @ts-check
// A confirmation before an action that changes data: a modal <dialog> that says what will
// happen and to how many items, with an optional comment box. Keyboard: Tab moves between
// its controls, Escape cancels, Enter in the comment box does not submit by accident.

import { el } from "./http.js";

/**
 * @typedef {{title: string, message: string, confirmLabel: string, comment?: {label: string, required: boolean},
 *   danger?: boolean, body?: HTMLElement, check?: () => string|null}} ConfirmOptions
 * `body`: more fields to fill in (a variant to choose); `check` answers why the answer
 * cannot be sent yet, or null.
 * @typedef {{confirmed: boolean, comment: string}} ConfirmAnswer
 */

/** Asks, and answers once the dialog closes. @param {ConfirmOptions} options
 * @returns {Promise<ConfirmAnswer>} */
export function confirmAction(options) {
  const dialog = /** @type {HTMLDialogElement} */ (el("dialog", undefined, "confirm-dialog"));
  dialog.setAttribute("aria-labelledby", "confirm-title");
  const form = /** @type {HTMLFormElement} */ (el("form"));
  form.method = "dialog";
  form.noValidate = true; // checked below, so the refusal is written in the dialog's words
  form.appendChild(el("h2", options.title)).id = "confirm-title";
  form.appendChild(el("p", options.message, "confirm-message"));
  /** @type {HTMLTextAreaElement|null} */ let comment = null;
  if (options.comment) {
    const label = el("label", options.comment.label, "confirm-comment");
    comment = /** @type {HTMLTextAreaElement} */ (el("textarea"));
    comment.rows = 3;
    comment.required = options.comment.required;
    label.appendChild(comment);
    form.appendChild(label);
  }
  if (options.body) form.appendChild(options.body);
  const problem = el("p", "", "error confirm-problem");
  problem.setAttribute("role", "alert");
  form.appendChild(problem);
  const buttons = el("div", undefined, "confirm-buttons");
  const cancel = /** @type {HTMLButtonElement} */ (el("button", gettext("Cancel"), "secondary"));
  cancel.type = "button";
  cancel.value = "cancel";
  const ok = /** @type {HTMLButtonElement} */ (el("button", options.confirmLabel, options.danger ? "danger" : "primary"));
  ok.type = "submit";
  ok.value = "confirm";
  buttons.append(cancel, ok);
  form.appendChild(buttons);
  dialog.appendChild(form);
  document.body.appendChild(dialog);
  return new Promise((resolve) => {
    cancel.addEventListener("click", () => dialog.close("cancel"));
    form.addEventListener("submit", (event) => {
      if (comment && comment.required && !comment.value.trim()) {
        event.preventDefault();
        problem.textContent = gettext("Write a comment first.");
        comment.focus();
        return;
      }
      const refusal = options.check ? options.check() : null;
      if (refusal) {
        event.preventDefault();
        problem.textContent = refusal;
      }
    });
    dialog.addEventListener("close", () => {
      resolve({ confirmed: dialog.returnValue === "confirm", comment: comment ? comment.value.trim() : "" });
      dialog.remove();
    }, { once: true });
    dialog.showModal();
    (comment || ok).focus();
  });
}
