// @ts-check
// Shared helpers for the page scripts: DOM nodes from text (never HTML), JSON API calls
// with the CSRF token, and readable error messages. Every page script calls the server
// through `api`, so a dropped connection or a server error reaches the page the same way
// everywhere: as a failed response whose `errorText` the page shows.

import { formatNumber } from "./format.js";

/** @typedef {{ok: boolean, status: number, data: any, networkError?: boolean}} ApiResponse */

/** An element of the tag's own type holding `text` as text.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {string} [text] @param {string} [cls]
 * @returns {HTMLElementTagNameMap[K]} */
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

/** A JSON (or form) request that never throws: a dropped connection comes back as
 * `{ok: false, status: 0, networkError: true}`, and a failure always carries a `data` that
 * `errorText` can word, even when the body was not JSON (a proxy's error page).
 * @param {string} url @param {string} method @param {any} [body]
 * @param {{keepalive?: boolean}} [options]
 * @returns {Promise<ApiResponse>} */
export async function api(url, method, body, options = {}) {
  const isForm = body instanceof FormData;
  /** @type {Record<string, string>} */ const headers = { "X-CSRFToken": csrfToken() };
  if (!isForm) headers["Content-Type"] = "application/json";
  /** @type {Response} */ let response;
  try {
    response = await fetch(url, {
      method,
      credentials: "same-origin",
      headers,
      body: body === undefined ? undefined : isForm ? body : JSON.stringify(body),
      // keepalive: the request outlives the page (a draft flushed as the annotator leaves).
      keepalive: Boolean(options.keepalive),
    });
  } catch (_) {
    // fetch rejects only when no answer arrived (offline, connection reset, aborted).
    return { ok: false, status: 0, data: { detail: connectionDropped() }, networkError: true };
  }
  let data = await response.json().catch(() => null);
  if (!response.ok && (data === null || typeof data !== "object")) {
    data = { detail: interpolate(gettext("The server answered %(status)s."), { status: response.status }, true) };
  }
  return { ok: response.ok, status: response.status, data };
}

function connectionDropped() {
  return gettext("The connection dropped before the server answered. Check your network and try again.");
}

/** @param {any} data */
export function errorText(data) {
  if (!data) return gettext("request failed");
  if (data.problems) return data.problems.join("\n");
  if (data.detail) return data.detail;
  return Object.entries(data).map(([field, messages]) => `${field}: ${[].concat(messages).join(" ")}`).join("; ");
}

/** A number for a table cell, in the reader's locale (format.js). @param {any} x @param {number} [digits] */
export function fmt(x, digits = 2) {
  return formatNumber(x, digits);
}
