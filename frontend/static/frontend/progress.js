// @ts-check
// The progress bar of every long job (imports, exports, agreement reports, explainer runs):
// a <progress> with "1,200 of 5,000 documents · about 40 s left", polled from the job's
// progress endpoint (one shape for all, annotate/job_progress.py) with a growing interval,
// until the job ends with its result link or its error in plain words.

import { api, el, errorText } from "./http.js";

/** @typedef {{kind: string, id: number, status: string, final: boolean, phase: string,
 *   done: number, total: number, unit: string, started_at: string|null,
 *   finished_at: string|null, seconds_left: number|null, error: string,
 *   result_url: string|null}} JobProgress */

const FIRST_DELAY_MS = 500;
const LONGEST_DELAY_MS = 5000;
const BACKOFF = 1.5;

const STATUS = /** @type {Record<string, string>} */ ({
  pending: gettext("Waiting for a worker"),
  running: gettext("Running"),
  succeeded: gettext("Done"),
  failed: gettext("Failed"),
  cancelled: gettext("Cancelled"),
});

/** What `done` and `total` count, as the sentence names them.
 * @param {string} unit @param {number} count */
function unitName(unit, count) {
  switch (unit) {
    case "documents": return ngettext("document", "documents", count);
    case "items": return ngettext("item", "items", count);
    case "instances": return ngettext("instance", "instances", count);
    case "chunks": return ngettext("chunk", "chunks", count);
    case "rows": return ngettext("row", "rows", count);
    default: return ngettext("record", "records", count);
  }
}

/** @param {number} n */
export function formatCount(n) {
  return new Intl.NumberFormat(document.documentElement.lang || undefined).format(n);
}

/** "about 40 s left", "about 3 min left", "about 2 h left".
 * @param {number} seconds */
export function timeLeftText(seconds) {
  if (seconds < 1) return gettext("almost done");
  if (seconds < 90) return interpolate(gettext("about %(n)s s left"), { n: Math.ceil(seconds) }, true);
  if (seconds < 90 * 60) return interpolate(gettext("about %(n)s min left"), { n: Math.round(seconds / 60) }, true);
  return interpolate(gettext("about %(n)s h left"), { n: Math.round(seconds / 3600) }, true);
}

/** The sentence under the bar.
 * @param {JobProgress} p */
export function progressText(p) {
  const parts = [];
  if (p.unit === "percent") {
    if (p.status === "running") parts.push(`${formatCount(p.done)} %`);
  } else if (p.total > 0) {
    parts.push(interpolate(gettext("%(done)s of %(total)s %(unit)s"), {
      done: formatCount(p.done), total: formatCount(p.total), unit: unitName(p.unit, p.total),
    }, true));
  } else if (p.done > 0) {
    parts.push(`${formatCount(p.done)} ${unitName(p.unit, p.done)}`);
  }
  if (!p.final && p.seconds_left !== null && p.seconds_left !== undefined) parts.push(timeLeftText(p.seconds_left));
  return parts.join(" · ");
}

/** Draw `p` into `container` (made once, then updated in place).
 * @param {HTMLElement} container @param {JobProgress} p
 * @param {{resultLabel?: string}} [options] */
export function renderProgress(container, p, options = {}) {
  let box = /** @type {HTMLElement|null} */ (container.querySelector(".job-progress"));
  if (!box) {
    box = el("div", undefined, "job-progress");
    box.setAttribute("role", "status");
    box.setAttribute("aria-live", "polite");
    const head = el("div", undefined, "job-progress-head");
    head.append(el("span", "", "job-progress-status"), el("span", "", "job-progress-phase"));
    const bar = el("progress");
    bar.className = "job-progress-bar";
    box.append(head, bar, el("div", "", "job-progress-text"), el("div", "", "job-progress-end"));
    container.replaceChildren(box);
  }
  box.dataset.status = p.status;
  const bar = /** @type {HTMLProgressElement} */ (box.querySelector("progress"));
  const label = STATUS[p.status] || p.status;
  /** @type {HTMLElement} */ (box.querySelector(".job-progress-status")).textContent = label;
  /** @type {HTMLElement} */ (box.querySelector(".job-progress-phase")).textContent =
    p.final || !p.phase ? "" : p.phase;
  if (p.total > 0 || p.final) {
    bar.max = Math.max(p.total, 1);
    bar.value = p.status === "succeeded" ? bar.max : Math.min(p.done, bar.max);
  } else {
    bar.removeAttribute("value"); // indeterminate until the job knows its total
  }
  bar.setAttribute("aria-label", label);
  /** @type {HTMLElement} */ (box.querySelector(".job-progress-text")).textContent = progressText(p);
  const end = /** @type {HTMLElement} */ (box.querySelector(".job-progress-end"));
  end.replaceChildren();
  if (p.status === "failed" && p.error) {
    end.append(el("p", p.error, "error pre"));
  } else if (p.status === "succeeded" && p.result_url) {
    const link = el("a", options.resultLabel || gettext("Open the result"));
    link.href = p.result_url;
    end.append(link);
  }
}

/** Poll `url` and keep `container`'s bar up to date until the job ends; then `onFinal`.
 * A failed poll is shown and polled again, later: the job runs on the server either way.
 * @param {HTMLElement} container @param {string} url
 * @param {{onFinal?: (p: JobProgress) => void, onUpdate?: (p: JobProgress) => void, resultLabel?: string}} [options]
 * @returns {{stop: () => void}} */
export function trackProgress(container, url, options = {}) {
  let delay = FIRST_DELAY_MS;
  let stopped = false;
  /** @type {number|undefined} */ let timer;
  let lastDone = -1;

  async function poll() {
    if (stopped) return;
    const response = await api(url, "GET");
    if (stopped) return;
    if (!response.ok) {
      let note = container.querySelector(".job-progress-poll-error");
      if (!note) {
        note = el("p", "", "job-progress-poll-error error");
        container.append(note);
      }
      note.textContent = errorText(response.data);
      delay = Math.min(delay * BACKOFF * 2, LONGEST_DELAY_MS * 2);
      timer = window.setTimeout(poll, delay);
      return;
    }
    container.querySelector(".job-progress-poll-error")?.remove();
    const p = /** @type {JobProgress} */ (response.data);
    renderProgress(container, p, options);
    options.onUpdate?.(p);
    if (p.final) {
      options.onFinal?.(p);
      return;
    }
    // Poll sooner while the count moves, less often while it stands still.
    delay = p.done !== lastDone ? FIRST_DELAY_MS * 2 : Math.min(delay * BACKOFF, LONGEST_DELAY_MS);
    lastDone = p.done;
    timer = window.setTimeout(poll, delay);
  }

  poll();
  return {
    stop() {
      stopped = true;
      window.clearTimeout(timer);
    },
  };
}

/** A list of progress bars in `area`, one per job followed: a job is added once, followed
 * until it ends, and its bar then keeps showing how it ended (result link or error).
 * @param {HTMLElement} area
 * @param {{url: (id: number) => string, onFinal?: (p: JobProgress) => void, resultLabel?: string}} options */
export function jobProgressList(area, options) {
  area.classList.add("job-progress-list");
  return {
    /** @param {number} id @param {string} title */
    follow(id, title) {
      if (area.querySelector(`[data-job-id="${id}"]`)) return;
      const item = el("div", undefined, "job-progress-item");
      item.dataset.jobId = String(id);
      const holder = el("div");
      item.append(el("div", title, "job-progress-title"), holder);
      area.prepend(item);
      trackProgress(holder, options.url(id), { onFinal: options.onFinal, resultLabel: options.resultLabel });
    },
  };
}
