// @ts-check
// Home page for staff: the "New project" form, sent to the API as JSON. A file of its own
// rather than an inline script, which the site's Content Security Policy refuses.

import { showFormErrors } from "./form_errors.js";
import { api } from "./http.js";

const form = /** @type {HTMLFormElement} */ (document.getElementById("project-form"));
const status = /** @type {HTMLElement} */ (document.querySelector(".project-status"));

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  const labels = String(data.get("labels") || "").split(",").map((l) => l.trim()).filter(Boolean);
  const { ok, data: body } = await api("/api/projects/", "POST", {
    name: data.get("name"),
    task_type: data.get("task_type"),
    labels,
    language: data.get("language"),
  });
  if (ok) {
    window.location.href = `/projects/${body.id}/`;
    return;
  }
  status.textContent = showFormErrors(form, body) || gettext("Check the fields marked in the form.");
  status.className = "project-status error";
});
