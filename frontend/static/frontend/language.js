// @ts-check
// The header's language switcher posts as soon as a language is picked: a select with a
// button beside it would be one more submit button in every page's header.
for (const select of document.querySelectorAll("select[data-auto-submit]")) {
  const form = /** @type {HTMLSelectElement} */ (select).form;
  if (form) select.addEventListener("change", () => form.submit());
}
