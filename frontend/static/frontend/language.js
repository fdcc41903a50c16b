// The header's language switcher posts as soon as a language is picked: a select with a
// button beside it would be one more submit button in every page's header.
for (const select of document.querySelectorAll(".language-switch select[data-auto-submit]")) {
  select.addEventListener("change", () => /** @type {HTMLFormElement} */ (select.form).submit());
}
