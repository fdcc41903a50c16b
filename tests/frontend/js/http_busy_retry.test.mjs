// A request the proxy turned away as busy (503, Retry-After, code "busy") is sent again after
// the wait it names, up to BUSY_RETRIES times; the application's own 503s are not.
import assert from "node:assert/strict";
import { beforeEach, describe, test } from "node:test";

globalThis.document = { cookie: "csrftoken=abc", documentElement: { lang: "en" } };
globalThis.gettext = (text) => text;
globalThis.interpolate = (text, values) => text.replace(/%\((\w+)\)s/g, (_, key) => String(values[key]));

const { api, busyRetryDelay, BUSY_RETRIES } = await import("../../../frontend/static/frontend/http.js");

const busy = () => ({ status: 503, body: { detail: "the server is busy", code: "busy" }, retryAfter: "3" });
const databaseAway = () => ({ status: 503, body: { detail: "away", code: "database_unavailable" }, retryAfter: "5" });
const fine = () => ({ status: 200, body: { id: 7 }, retryAfter: null });

let sent;
/** fetch answering each call with the next of `answers`. */
function serve(...answers) {
  sent = [];
  globalThis.fetch = async (url, init) => {
    sent.push({ url, method: init.method, body: init.body });
    const { status, body, retryAfter } = answers[Math.min(sent.length, answers.length) - 1]();
    return {
      ok: status >= 200 && status < 300,
      status,
      headers: { get: (name) => (name === "Retry-After" ? retryAfter : null) },
      json: async () => body,
    };
  };
}

let waited;
const sleep = async (ms) => {
  waited.push(ms);
};
beforeEach(() => {
  waited = [];
});

describe("busyRetryDelay", () => {
  test("the proxy's busy answer is waited out, for the seconds it names", () => {
    assert.equal(busyRetryDelay(503, { code: "busy" }, "3", 0), 3000);
    assert.equal(busyRetryDelay(503, { code: "busy" }, "0", 0), 0);
  });
  test("a long Retry-After is capped, a missing or malformed one is not waited on", () => {
    assert.equal(busyRetryDelay(503, { code: "busy" }, "120", 0), 10000);
    assert.equal(busyRetryDelay(503, { code: "busy" }, null, 0), null);
    assert.equal(busyRetryDelay(503, { code: "busy" }, "soon", 0), null);
  });
  test("the application's own 503s are shown at once: the request reached it", () => {
    assert.equal(busyRetryDelay(503, { code: "database_unavailable" }, "5", 0), null);
    assert.equal(busyRetryDelay(503, { code: "queue_unavailable" }, "5", 0), null);
    assert.equal(busyRetryDelay(503, null, "5", 0), null);
  });
  test("other statuses are never retried, and retries stop after BUSY_RETRIES", () => {
    assert.equal(busyRetryDelay(429, { code: "busy" }, "3", 0), null);
    assert.equal(busyRetryDelay(500, { code: "busy" }, "3", 0), null);
    assert.equal(busyRetryDelay(503, { code: "busy" }, "3", BUSY_RETRIES - 1), 3000);
    assert.equal(busyRetryDelay(503, { code: "busy" }, "3", BUSY_RETRIES), null);
  });
});

describe("api", () => {
  test("a submit turned away twice as busy is sent again, unchanged, and its answer returned", async () => {
    serve(busy, busy, fine);
    const answer = await api("/api/submit/", "POST", { client_uuid: "u1" }, { sleep });
    assert.deepEqual(answer, { ok: true, status: 200, data: { id: 7 } });
    assert.equal(sent.length, 3);
    assert.deepEqual(new Set(sent.map((s) => s.body)), new Set([JSON.stringify({ client_uuid: "u1" })]));
    assert.deepEqual(waited, [3000, 3000]);
  });
  test("a page that stays busy gets the refusal after BUSY_RETRIES waits", async () => {
    serve(busy);
    const answer = await api("/api/next/", "POST", {}, { sleep });
    assert.equal(answer.status, 503);
    assert.equal(answer.data.code, "busy");
    assert.equal(sent.length, BUSY_RETRIES + 1);
    assert.equal(waited.length, BUSY_RETRIES);
  });
  test("a read refused because the database is away is shown at once", async () => {
    serve(databaseAway, fine);
    const answer = await api("/api/projects/1/", "GET", undefined, { sleep });
    assert.equal(answer.status, 503);
    assert.equal(sent.length, 1);
    assert.deepEqual(waited, []);
  });
  test("a draft flushed as the page closes (keepalive) is not retried", async () => {
    serve(busy, fine);
    const answer = await api("/api/draft/", "PUT", { x: 1 }, { sleep, keepalive: true });
    assert.equal(answer.status, 503);
    assert.equal(sent.length, 1);
  });
});
