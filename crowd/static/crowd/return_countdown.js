// @ts-check
// The done page goes back to the platform by itself a few seconds after it shows, as the
// platforms expect; the "Stay on this page" button stops that, so nobody is taken away before
// they have read or copied the completion code (WCAG 2.2.1: a time limit that can be turned
// off; a <meta> refresh could not be). Without scripts, the return link does the same.
// A classic script: it makes no request of its own.
const returnLink = /** @type {HTMLAnchorElement|null} */ (document.getElementById("return-link"));
const stay = /** @type {HTMLButtonElement|null} */ (document.getElementById("return-stay"));
const notice = document.getElementById("return-notice");
if (returnLink) {
  const timer = window.setTimeout(() => window.location.assign(returnLink.href), 3000);
  if (stay) {
    stay.hidden = false;
    stay.addEventListener("click", () => {
      window.clearTimeout(timer);
      stay.hidden = true;
      if (notice) notice.hidden = true;
      returnLink.focus();
    });
  }
}
