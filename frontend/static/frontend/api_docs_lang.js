// The API docs page's language on its <html> element, which drf-spectacular's template
// writes without one (screen readers then guess the language).
const script = /** @type {HTMLScriptElement} */ (document.currentScript);
document.documentElement.lang = script.dataset.lang || "en";
