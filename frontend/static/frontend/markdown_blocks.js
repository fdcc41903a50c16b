// @ts-check
// The datasheet's Markdown (exports/datasheet.py writes it) read into blocks a page can draw
// with text nodes only: headings, paragraphs, bullet lists, quotes and tables, with `code`
// spans inside. The sheet holds imported and admin-written text, so nothing in it is ever
// parsed as HTML: a "<b>" stays the four characters it is. This is the subset the datasheet
// writes, not a general Markdown reader; anything else is shown as a paragraph of its text.

/** @typedef {{kind: "heading", level: number, text: string}
 *   | {kind: "paragraph", text: string}
 *   | {kind: "list", items: string[]}
 *   | {kind: "quote", lines: string[]}
 *   | {kind: "table", head: string[], rows: string[][]}} MarkdownBlock */

/** A table row's cells: "| a | b \| c |" -> ["a", "b | c"]. @param {string} line */
export function tableCells(line) {
  const inner = line.trim().replace(/^\|/, "").replace(/\|$/, "");
  /** @type {string[]} */ const cells = [];
  let cell = "";
  for (let i = 0; i < inner.length; i += 1) {
    if (inner[i] === "\\" && inner[i + 1] === "|") {
      cell += "|";
      i += 1;
    } else if (inner[i] === "|") {
      cells.push(cell.trim());
      cell = "";
    } else cell += inner[i];
  }
  cells.push(cell.trim());
  return cells;
}

const SEPARATOR = /^\|?(\s*:?-{3,}:?\s*\|)+\s*:?-{0,}:?\s*$/;

/** The blocks of a Markdown text, in order. @param {string} text @returns {MarkdownBlock[]} */
export function markdownBlocks(text) {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  /** @type {MarkdownBlock[]} */ const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (!line.trim()) {
      i += 1;
    } else if (heading) {
      blocks.push({ kind: "heading", level: heading[1].length, text: heading[2].trim() });
      i += 1;
    } else if (line.startsWith("|") && i + 1 < lines.length && SEPARATOR.test(lines[i + 1])) {
      const head = tableCells(line);
      /** @type {string[][]} */ const rows = [];
      i += 2;
      while (i < lines.length && lines[i].startsWith("|")) rows.push(tableCells(lines[i++]));
      blocks.push({ kind: "table", head, rows });
    } else if (/^[-*] /.test(line)) {
      /** @type {string[]} */ const items = [];
      while (i < lines.length && /^[-*] /.test(lines[i])) items.push(lines[i++].slice(2).trim());
      blocks.push({ kind: "list", items });
    } else if (line.startsWith(">")) {
      /** @type {string[]} */ const quoted = [];
      while (i < lines.length && lines[i].startsWith(">")) quoted.push(lines[i++].replace(/^> ?/, ""));
      blocks.push({ kind: "quote", lines: quoted });
    } else {
      /** @type {string[]} */ const paragraph = [];
      while (
        i < lines.length && lines[i].trim() && !/^(#{1,6}\s|[-*] |>|\|)/.test(lines[i])
      ) paragraph.push(lines[i++]);
      if (!paragraph.length) paragraph.push(lines[i++]);
      blocks.push({ kind: "paragraph", text: paragraph.join(" ") });
    }
  }
  return blocks;
}

/** Text and `code` runs of one line: "a `b` c" -> [["a ", false], ["b", true], [" c", false]].
 * @param {string} text @returns {[string, boolean][]} */
export function inlineRuns(text) {
  /** @type {[string, boolean][]} */ const runs = [];
  const pattern = /`([^`]+)`/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const at = /** @type {number} */ (match.index);
    if (at > last) runs.push([text.slice(last, at), false]);
    runs.push([match[1], true]);
    last = at + match[0].length;
  }
  if (last < text.length) runs.push([text.slice(last), false]);
  return runs;
}

/** Draw the blocks into a container with text nodes only.
 * @param {HTMLElement} container @param {string} text */
export function renderMarkdown(container, text) {
  const doc = container.ownerDocument;
  /** @param {string} tag @param {string} content */
  const inline = (tag, content) => {
    const node = doc.createElement(tag);
    for (const [run, code] of inlineRuns(content)) {
      if (code) node.appendChild(doc.createElement("code")).textContent = run;
      else node.appendChild(doc.createTextNode(run));
    }
    return node;
  };
  container.replaceChildren();
  for (const block of markdownBlocks(text)) {
    if (block.kind === "heading") {
      // The page has its own h1 and h2: the sheet's headings start at h3.
      container.appendChild(inline(`h${Math.min(6, block.level + 2)}`, block.text));
    } else if (block.kind === "paragraph") {
      container.appendChild(inline("p", block.text));
    } else if (block.kind === "list") {
      const list = container.appendChild(doc.createElement("ul"));
      for (const item of block.items) list.appendChild(inline("li", item));
    } else if (block.kind === "quote") {
      const quote = container.appendChild(doc.createElement("blockquote"));
      for (const line of block.lines) quote.appendChild(inline("p", line));
    } else {
      const table = container.appendChild(doc.createElement("table"));
      table.className = "grid";
      const head = table.appendChild(doc.createElement("thead")).appendChild(doc.createElement("tr"));
      for (const cell of block.head) head.appendChild(inline("th", cell));
      const body = table.appendChild(doc.createElement("tbody"));
      for (const row of block.rows) {
        const tr = body.appendChild(doc.createElement("tr"));
        for (const cell of row) tr.appendChild(inline("td", cell));
      }
    }
  }
}
