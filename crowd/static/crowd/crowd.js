// @ts-check
// A crowd session's hand-off, beside the annotator workspace (which knows nothing of
// platforms): after each submit, and when the workspace finds no item or is refused, it
// asks the server whether the session is over, and if so takes the worker to the way back
// to their platform. The server decides from its own records; this script sends nothing
// but "check now".
//
// The check runs *before* the workspace asks for its next item (by wrapping fetch for
// that one request), so a worker who has just finished never leaves a leased item behind
// that would sit out its lease while others wait for it.
import { api, el, errorText } from "../frontend/http.js";

const box = document.getElementById("crowd-session");
const workspace = document.getElementById("workspace");

if (box && workspace) {
  const sessionId = box.dataset.sessionId;
  const count = /** @type {HTMLElement} */ (box.querySelector(".crowd-count"));
  const fill = /** @type {HTMLElement} */ (box.querySelector(".crowd-bar-fill"));
  const extra = /** @type {HTMLElement} */ (box.querySelector(".crowd-extra"));
  const finishButton = /** @type {HTMLButtonElement} */ (box.querySelector(".crowd-finish"));
  /** @type {Promise<any>|null} */ let inFlight = null;
  // Made on the first failure only: the template has no place for one, and most sessions never need it.
  /** @type {HTMLElement|null} */ let problem = null;

  /** Shows why the server's count could not be read, or takes the note away. @param {string} text */
  const sayProblem = (text) => {
    if (!problem && text) {
      problem = el("p", undefined, "crowd-problem error");
      problem.setAttribute("role", "alert");
      box.appendChild(problem);
    }
    if (problem) {
      problem.textContent = text;
      problem.hidden = !text;
    }
  };

  /** @param {any} progress */
  const show = (progress) => {
    if (progress.ended) {
      box.dataset.ended = progress.status;
      window.location.assign(progress.next_url);
      return;
    }
    count.textContent = String(progress.items_done);
    fill.style.width = `${Math.min(100, (100 * progress.items_done) / progress.items_required)}%`;
    const enough = progress.items_done >= progress.items_required;
    extra.hidden = finishButton.hidden = !enough;
    box.dataset.itemsDone = String(progress.items_done);
  };

  /** @param {Record<string, boolean>} body */
  const check = async (body) => {
    if (inFlight) await inFlight.catch(() => null);
    inFlight = api(`/api/crowd/sessions/${sessionId}/finish/`, "POST", body);
    const response = await inFlight;
    inFlight = null;
    sayProblem(response.ok ? "" : errorText(response.data));
    if (response.ok) show(response.data);
    return response.ok ? response.data : null;
  };

  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    const method = (init && init.method ? init.method : "GET").toUpperCase();
    if (method === "POST" && /\/assignments\/next\/$/.test(url)) {
      const progress = await check({});
      // Ended: the page is leaving; the workspace waits instead of leasing an item.
      if (progress && progress.ended) return new Promise(() => {});
    }
    return realFetch(input, init);
  };

  new MutationObserver((records) => {
    for (const record of records) {
      if (record.attributeName === "data-done" && workspace.dataset.done) check({ no_work_left: true });
      if (record.attributeName === "data-refused" && workspace.dataset.refused) check({});
    }
  }).observe(workspace, { attributes: true, attributeFilter: ["data-done", "data-refused"] });

  finishButton.addEventListener("click", () => check({ finish_now: true }));
  // The server's count on arrival: a resumed session shows where it stands.
  api(`/api/crowd/sessions/${sessionId}/`, "GET").then((response) => {
    sayProblem(response.ok ? "" : errorText(response.data));
    if (response.ok) show(response.data);
  });
}
