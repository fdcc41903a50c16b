// @ts-check
// The header's language switcher posts as soon as a language is picked: a select with a
// button beside it would be one more submit button in every page's header.
// A classic script, not a module: it makes no request through JavaScript (the form posts
// itself), so it needs nothing from http.js.
for (const select of document.querySelectorAll("select[data-auto-submit]")) {
  const form = /** @type {HTMLSelectElement} */ (select).form;
  if (form) select.addEventListener("change", () => form.submit());
}
