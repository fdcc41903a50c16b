// @ts-check
// Numbers, dates and "how long ago" in the reader's language (the page's <html lang>), for
// every table and notice: 2.67 rather than 2.6666666667, and a date as the locale writes it
// rather than an ISO timestamp.

/** The page's language as Intl takes it ("zh-hans" -> "zh-Hans"); undefined lets the browser choose. */
export function pageLocale() {
  const lang = document.documentElement.lang;
  if (!lang) return undefined;
  const [language, region] = lang.split("-");
  if (!region) return language;
  return `${language}-${region.length === 4 ? region[0].toUpperCase() + region.slice(1) : region.toUpperCase()}`;
}

/** @type {Map<string, Intl.NumberFormat>} */
const numberFormats = new Map();

/** A number with `digits` decimals, grouped as the locale groups them; a whole number
 * without decimals unless `fixed` (a column of scores, where 1 reads as 1.00 beside 0.97);
 * "n/a" for a missing value, text as it is.
 * @param {any} value @param {number} [digits] @param {boolean} [fixed] */
export function formatNumber(value, digits = 2, fixed = false) {
  if (value === null || value === undefined) return gettext("n/a");
  if (typeof value !== "number") return String(value);
  if (!Number.isFinite(value)) return String(value);
  const decimals = Number.isInteger(value) && !fixed ? 0 : digits;
  const key = `${pageLocale()}|${decimals}`;
  let format = numberFormats.get(key);
  if (!format) {
    format = new Intl.NumberFormat(pageLocale(), { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
    numberFormats.set(key, format);
  }
  // "-0.00" reads as a sign error; a value that rounds to zero is shown as zero.
  const shown = format.format(value);
  return /^-0([.,]0*)?$/.test(shown) ? shown.slice(1) : shown;
}

/** A date and time as the reader's locale writes them. @param {string | number | Date} when */
export function formatDateTime(when) {
  const date = when instanceof Date ? when : new Date(when);
  if (Number.isNaN(date.getTime())) return String(when);
  return new Intl.DateTimeFormat(pageLocale(), { dateStyle: "medium", timeStyle: "short" }).format(date);
}

const UNITS = /** @type {Array<[Intl.RelativeTimeFormatUnit, number]>} */ ([
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
]);

/** "5 minutes ago", "yesterday", "just now" in the reader's language.
 * @param {string | number | Date} when @param {Date} [now] */
export function formatTimeAgo(when, now = new Date()) {
  const date = when instanceof Date ? when : new Date(when);
  if (Number.isNaN(date.getTime())) return String(when);
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  const format = new Intl.RelativeTimeFormat(pageLocale(), { numeric: "auto" });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  }
  return Math.abs(seconds) < 45 ? gettext("just now") : format.format(seconds < 0 ? -1 : 1, "minute");
}
