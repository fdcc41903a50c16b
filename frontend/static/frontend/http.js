// @ts-check
// Shared helpers for the page scripts: DOM nodes from text (never HTML), JSON API calls
// with the CSRF token, and readable error messages.

/** @param {string} tag @param {string} [text] @param {string} [cls] */
export function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

export function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** @param {string} url @param {string} method @param {any} [body] */
export async function api(url, method, body) {
  const isForm = body instanceof FormData;
  /** @type {Record<string, string>} */ const headers = { "X-CSRFToken": csrfToken() };
  if (!isForm) headers["Content-Type"] = "application/json";
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers,
    body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
  });
  const data = await response.json().catch(() => null);
  return { ok: response.ok, status: response.status, data };
}

/** @param {any} data */
export function errorText(data) {
  if (!data) return gettext("request failed");
  if (data.problems) return data.problems.join("\n");
  if (data.detail) return data.detail;
  return Object.entries(data).map(([field, messages]) => `${field}: ${[].concat(messages).join(" ")}`).join("; ");
}

/** @param {any} x @param {number} [digits] */
export function fmt(x, digits = 2) {
  if (x === null || x === undefined) return gettext("n/a");
  return typeof x === "number" ? (Number.isInteger(x) ? String(x) : x.toFixed(digits)) : String(x);
}
