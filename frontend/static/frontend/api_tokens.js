// @ts-check
// The API tokens page: copy the new token (shown once) to the clipboard.

const button = document.getElementById("token-copy");
const field = /** @type {HTMLInputElement | null} */ (document.getElementById("token-secret"));
if (button && field) {
  field.addEventListener("focus", () => field.select());
  button.addEventListener("click", async () => {
    field.select();
    try {
      await navigator.clipboard.writeText(field.value);
      button.textContent = gettext("Copied");
    } catch {
      // No clipboard here (a page not served over HTTPS): the token is selected, to copy by hand.
      button.textContent = gettext("Selected: copy it with Ctrl+C");
    }
  });
}

// Revoking cannot be undone: the scripts that use the token stop working at once.
for (const form of document.querySelectorAll("form.token-revoke")) {
  form.addEventListener("submit", (event) => {
    const name = /** @type {HTMLFormElement} */ (form).dataset.tokenName || "";
    const question = interpolate(
      gettext("Revoke the token “%s”? Every script that uses it stops working at once."),
      [name],
    );
    if (!window.confirm(question)) event.preventDefault();
  });
}
