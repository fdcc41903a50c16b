// @ts-check
// The finished HIT goes back to MTurk by itself; the button stays for when scripts are off.
// A classic script, not a module: it makes no request of its own (the form posts to MTurk),
// so it needs nothing from http.js.
/** @type {HTMLFormElement|null} */ (document.getElementById("mturk-submit"))?.submit();
