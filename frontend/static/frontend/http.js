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

// How often, and how long at most each time, a request that the server turned away as busy
// is sent again before the page shows the refusal.
export const BUSY_RETRIES = 5;
const BUSY_WAIT_CAP_SECONDS = 10;

/** How long to wait before sending a refused request again, in milliseconds, or null when it
 * must not be sent again. Only the proxy's `busy` answer (a 503 with Retry-After, config/nginx)
 * is waited out: it is given before the application sees the request, so sending it again
 * cannot do anything twice, whatever the method. The application's own 503s (the database or
 * the job queue away) are shown at once, with their own words.
 * @param {number} status @param {any} data @param {string | null} retryAfter
 * @param {number} attempt how many times it was already sent again */
export function busyRetryDelay(status, data, retryAfter, attempt) {
  if (status !== 503 || retryAfter === null || attempt >= BUSY_RETRIES) return null;
  if (data === null || typeof data !== "object" || data.code !== "busy") return null;
  const seconds = Number(retryAfter);
  if (!Number.isFinite(seconds) || seconds < 0) return null;
  return Math.min(seconds, BUSY_WAIT_CAP_SECONDS) * 1000;
}

/** @param {number} ms */
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A JSON (or form) request that never throws: a dropped connection comes back as
 * `{ok: false, status: 0, networkError: true}`, and a failure always carries a `data` that
 * `errorText` can word, even when the body was not JSON (a proxy's error page). When many
 * people arrive at once the proxy answers "busy, retry in a few seconds"; such a request is
 * sent again after the wait it names (busyRetryDelay), so a crowd launch shows a participant
 * a short wait, not an error. A request sent as the page closes (keepalive) is not retried.
 * @param {string} url @param {string} method @param {any} [body]
 * @param {{keepalive?: boolean, sleep?: (ms: number) => Promise<unknown>}} [options]
 * @returns {Promise<ApiResponse>} */
export async function api(url, method, body, options = {}) {
  const sleep = options.sleep || wait;
  for (let attempt = 0; ; attempt += 1) {
    const answer = await sendOnce(url, method, body, options);
    const delay = options.keepalive
      ? null
      : busyRetryDelay(answer.status, answer.data, answer.retryAfter, attempt);
    if (delay === null) {
      const { retryAfter: _, ...response } = answer;
      return response;
    }
    await sleep(delay);
  }
}

/** @param {string} url @param {string} method @param {any} body @param {{keepalive?: boolean}} options
 * @returns {Promise<ApiResponse & {retryAfter: string | null}>} */
async function sendOnce(url, method, body, options) {
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
    return { ok: false, status: 0, data: { detail: connectionDropped() }, networkError: true, retryAfter: null };
  }
  let data = await response.json().catch(() => null);
  if (!response.ok && (data === null || typeof data !== "object")) {
    data = { detail: interpolate(gettext("The server answered %(status)s."), { status: response.status }, true) };
  }
  return { ok: response.ok, status: response.status, data, retryAfter: response.headers.get("Retry-After") };
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
