// The byte view of one step: hex and ASCII, each field span coloured and labelled; hovering
// (or focusing) a field highlights its bytes and shows its value and explanation; a byte
// shared by several fields (a prefix byte) is drawn bit by bit; a Huffman-coded string shows
// its decoded text with a note; a field section's Required Insert Count, Base and absolute
// indexes are worked out in words. Everything shown comes from the step's `event.bytes`,
// `event.fields` and `event.calculation` as the API computed them.
import { append, clear, h } from "./dom.js";

const PER_LINE = 16;
const COLOURS = 8;
// A long unit (a DATA frame of 20,000 bytes) is folded, as on the handout (handout.py):
// its first FOLD_HEAD and last FOLD_TAIL bytes or so are shown, whole lines of 16, with one
// line saying how many lie between and a button that shows them all.
const FOLD_OVER = 1024;
const FOLD_HEAD = 256;
const FOLD_TAIL = 64;

// The offsets of the hex lines not shown: none, or [first, end) in whole lines.
function foldedRange(length) {
  if (length <= FOLD_OVER) return null;
  const tail = Math.floor((length - FOLD_TAIL) / PER_LINE) * PER_LINE;
  return { first: FOLD_HEAD, end: tail };
}

function offsetText(offset) {
  return offset.toString(16).padStart(4, "0");
}

function colour(index) {
  return `f${index % COLOURS}`;
}

function link(rfc) {
  if (!rfc) return null;
  return h("a", { href: rfc.url, target: "_blank", rel: "noopener noreferrer" }, rfc.label);
}

export function renderBytes(container, event, showAll = false) {
  clear(container);
  if (!event.length) {
    container.append(h("p", { class: "muted" }, event.bytes_note));
    return;
  }
  const fields = event.fields;
  const detail = h("div", { class: "field-detail", "aria-live": "polite" },
    h("span", { class: "muted" }, "Hover over or focus a field to see its value and meaning."));
  const byteCells = [];

  // Focusable, so that where it scrolls sideways (a narrow screen) a keyboard can scroll it.
  const hex = h("div", { class: "hex", role: "group", "aria-label": `${event.length} bytes`, tabindex: "0" });
  const fold = showAll ? null : foldedRange(event.bytes.length);
  for (let start = 0; start < event.bytes.length; start += PER_LINE) {
    if (fold && start === fold.first) {
      const showing = h("button", { type: "button", class: "show-all-bytes" },
        `Show all ${event.bytes.length} bytes`);
      showing.addEventListener("click", () => renderBytes(container, event, true));
      hex.append(h("div", { class: "hex-line hex-fold" },
        h("span", { class: "offset" }, "…"),
        h("span", {}, `${fold.end - fold.first} bytes not shown (${offsetText(fold.first)} to `
          + `${offsetText(fold.end - 1)}) `, showing)));
      start = fold.end - PER_LINE;
      continue;
    }
    const line = h("div", { class: "hex-line" },
      h("span", { class: "offset" }, offsetText(start)));
    const hexPart = h("span", { class: "hex-bytes" });
    const asciiPart = h("span", { class: "ascii" });
    for (const byte of event.bytes.slice(start, start + PER_LINE)) {
      const owner = byte.fields.length ? byte.fields[byte.fields.length - 1] : null;
      const split = byte.bit_fields !== null;
      const cls = `b ${owner === null ? "unlabelled" : colour(owner)}${split ? " split" : ""}`;
      const cell = h("span", { class: cls, data: { offset: byte.offset, fields: byte.fields.join(",") } }, byte.hex);
      const ascii = h("span", { class: cls, data: { offset: byte.offset, fields: byte.fields.join(",") } }, byte.ascii);
      byteCells.push(cell, ascii);
      hexPart.append(cell);
      asciiPart.append(ascii);
      for (const node of [cell, ascii]) {
        node.addEventListener("mouseenter", () => {
          if (owner !== null) show(owner);
        });
      }
    }
    line.append(hexPart, asciiPart);
    hex.append(line);
  }

  const bits = h("div", { class: "bits" });
  for (const byte of event.bytes) {
    if (byte.bit_fields === null) continue;
    const groups = h("div", { class: "bit-groups" });
    let index = 0;
    while (index < 8) {
      const owner = byte.bit_fields[index];
      let end = index;
      while (end + 1 < 8 && byte.bit_fields[end + 1] === owner) end += 1;
      const name = owner === null ? "" : fields[owner].name;
      const group = h("span", {
        class: `bit-group ${owner === null ? "unlabelled" : colour(owner)}`,
        tabindex: owner === null ? null : "0",
        data: { field: owner === null ? "" : owner },
      }, h("span", { class: "bit-value" }, byte.bits.slice(index, end + 1)),
        h("span", { class: "bit-name" }, name));
      if (owner !== null) {
        group.addEventListener("mouseenter", () => show(owner));
        group.addEventListener("focus", () => show(owner));
      }
      groups.append(group);
      index = end + 1;
    }
    bits.append(h("div", { class: "bit-byte" },
      h("span", { class: "bit-caption" }, `byte ${byte.offset} = 0x${byte.hex} = ${byte.bits.slice(0, 4)} ${byte.bits.slice(4)}`),
      groups));
  }

  const list = h("ol", { class: "field-list", start: "0" });
  const items = fields.map((field) => {
    const item = h("li", { class: `field ${colour(field.index)}`, tabindex: "0", data: { field: field.index } },
      h("span", { class: "swatch", "aria-hidden": "true" }),
      h("span", { class: "field-name" }, field.name),
      h("span", { class: "field-where" }, field.where + (field.bits ? ` (${field.bits})` : "")),
      h("span", { class: "field-value-cell" },
        h("span", { class: "field-value" }, field.value_text),
        field.huffman ? h("span", { class: "huffman-tag", title: field.note }, "Huffman-coded") : null));
    item.addEventListener("mouseenter", () => show(field.index));
    item.addEventListener("focus", () => show(field.index));
    list.append(item);
    return item;
  });

  function show(index) {
    const field = fields[index];
    for (const cell of byteCells) {
      const owners = cell.dataset.fields ? cell.dataset.fields.split(",").map(Number) : [];
      cell.classList.toggle("hl", owners.includes(index));
    }
    items.forEach((item, position) => item.classList.toggle("hl", position === index));
    for (const group of bits.querySelectorAll(".bit-group")) {
      group.classList.toggle("hl", group.dataset.field === String(index));
    }
    // dom.js's append skips the absent parts (the DOM's own would print "null").
    append(clear(detail), [
      h("strong", { class: "detail-name" }, field.name),
      " ",
      h("span", { class: "muted" }, field.where + (field.bits ? `, bits ${field.bits}` : "")),
      h("div", { class: "detail-value" }, "Value: ", h("code", {}, field.value_text)),
      field.note ? h("div", { class: "detail-note" }, field.note) : null,
      h("div", { class: "detail-explain" }, field.explain),
      field.rfc_link ? h("div", {}, link(field.rfc_link), " ", field.rfc_link.title) : null,
    ]);
  }

  container.append(hex);
  if (bits.childElementCount) {
    container.append(h("h3", {}, "Bytes shared by several fields, bit by bit"), bits);
  }
  container.append(detail);
  if (event.calculation) container.append(renderCalculation(event.calculation));
  container.append(h("h3", {}, "Fields"), list);
}

// RFC 9204 §4.5.1 and §3.2.5-§3.2.6 written out (computed by the server: prefix_math.py).
function renderCalculation(calculation) {
  return h("section", { class: "calculation", "aria-label": calculation.title },
    h("h3", {}, calculation.title),
    h("ol", {}, calculation.lines.map((line) => h("li", {},
      h("span", { class: "calc-text" }, line.text), " ",
      h("span", { class: "calc-rfc" }, link(line.rfc))))));
}

export { link };
