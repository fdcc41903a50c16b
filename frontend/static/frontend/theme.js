// @ts-check
// The palette's colours for what a style sheet cannot colour (a canvas): palette.css holds
// each colour of the light theme and its dark counterpart as custom properties.

/** A colour a canvas can use: `var(--name)` read from the page's palette as it is now
 * (light or dark), anything else as given. @param {string} colour */
export function themeColour(colour) {
  const named = /^var\((--[\w-]+)\)$/.exec(colour);
  if (!named) return colour;
  return getComputedStyle(document.documentElement).getPropertyValue(named[1]).trim() || colour;
}
