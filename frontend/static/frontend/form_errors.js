// @ts-check
// An API refusal shown where it belongs: each message that names a field of the form sits
// under that field (aria-invalid, aria-describedby), and only what names no field goes to the
// form's status line. Messages are inserted as text.

import { errorText } from "./http.js";

/** "field: message", as the services word a problem with one field. */
const FIELD_MESSAGE = /^([a-z][a-z0-9_]*): ([\s\S]+)$/;

/** Every message of a DRF error value (a list, a nested object or a string).
 * @param {any} value @returns {string[]} */
function messagesOf(value) {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value.flatMap(messagesOf);
  if (typeof value === "object") return Object.values(value).flatMap(messagesOf);
  return [String(value)];
}

/** (field or null, message) pairs of an API error body: DRF's {field: [messages]}, a
 * service's `problems` list or its `detail`, each "field: message" read as the field's.
 * @param {any} data @returns {Array<[string | null, string]>} */
export function fieldMessages(data) {
  if (!data || typeof data !== "object") return [[null, errorText(data)]];
  /** @param {string} text @returns {[string | null, string]} */
  const split = (text) => {
    const match = FIELD_MESSAGE.exec(text);
    return match ? [match[1], match[2]] : [null, text];
  };
  if (Array.isArray(data.problems)) return data.problems.map((/** @type {any} */ p) => split(String(p)));
  if (data.detail !== undefined) return [split(String(data.detail))];
  /** @type {Array<[string | null, string]>} */ const pairs = [];
  for (const [key, value] of Object.entries(data)) {
    if (key === "code") continue;
    const field = key === "non_field_errors" ? null : key;
    for (const message of messagesOf(value)) pairs.push([field, message]);
  }
  return pairs;
}

/** Take away the messages an earlier refusal put under the form's fields. @param {HTMLFormElement} form */
export function clearFormErrors(form) {
  form.querySelectorAll(".field-error").forEach((node) => node.remove());
  form.querySelectorAll("[aria-invalid=true]").forEach((control) => {
    control.removeAttribute("aria-invalid");
    const described = (control.getAttribute("aria-describedby") || "").split(" ").filter((id) => !id.startsWith("field-error-"));
    if (described.length) control.setAttribute("aria-describedby", described.join(" "));
    else control.removeAttribute("aria-describedby");
  });
}

/** Show an API refusal in the form: a field's messages under it, the first such field
 * focused. Returns the text of the messages that name no field of the form ("" if none).
 * @param {HTMLFormElement} form @param {any} data
 * @param {Record<string, string>} [fieldNames] an API field -> the form control that holds it
 * @returns {string} */
export function showFormErrors(form, data, fieldNames = {}) {
  clearFormErrors(form);
  /** @type {string[]} */ const elsewhere = [];
  /** @type {HTMLElement | null} */ let first = null;
  for (const [field, message] of fieldMessages(data)) {
    const name = field === null ? null : fieldNames[field] ?? field;
    const found = name === null ? null : form.elements.namedItem(name);
    const control = found instanceof RadioNodeList ? /** @type {HTMLElement} */ (found[0]) : /** @type {HTMLElement | null} */ (found);
    if (!control || control.getAttribute("type") === "hidden") {
      elsewhere.push(field === null ? message : `${field}: ${message}`);
      continue;
    }
    const id = `field-error-${form.id || "form"}-${name}`;
    let note = /** @type {HTMLElement | null} */ (form.querySelector(`[id="${id}"]`));
    if (note) note.textContent += ` ${message}`;
    else {
      note = document.createElement("span");
      note.className = "field-error";
      note.id = id;
      note.textContent = message;
      // Under the control: inside its label when it has one, so the two stay together.
      const label = control.closest("label");
      if (label && form.contains(label)) label.appendChild(note);
      else control.after(note);
    }
    control.setAttribute("aria-invalid", "true");
    const described = (control.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
    if (!described.includes(id)) control.setAttribute("aria-describedby", [...described, id].join(" "));
    // The message goes once the field is changed.
    control.addEventListener("input", () => {
      note?.remove();
      control.removeAttribute("aria-invalid");
    }, { once: true });
    first ??= control;
  }
  first?.focus();
  return elsewhere.join("\n");
}
