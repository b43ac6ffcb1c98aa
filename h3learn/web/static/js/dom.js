// Building DOM nodes safely: every piece of text becomes a text node (textContent), never
// HTML. Header names and values come from real traffic and uploaded files: a value such as
// `<img src=x onerror=alert(1)>` must show as those characters.

// h("td", {class: "x", data: {path: "a.b"}}, "text", child) -> <td class="x" data-path="a.b">
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "data") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) throw new Error(`h(): no event attributes (${key})`);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

export async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const message = body && body.error ? body.error : `${response.status} ${response.statusText}`;
    // The whole answer goes along: some errors say more than their message (the `stream`
    // filter's names the argument and the streams there are).
    throw Object.assign(new Error(message), { status: response.status, body });
  }
  return body;
}

// Keep a parent's children in step with a list of items without rebuilding them all:
// items are [{key, sig, build, update?}] in display order. A child whose key and sig (a
// string of everything it shows) are unchanged is kept as it is (and `update(node)` is
// called, for children that sync their own children); a changed one is built again; the
// others are removed. Only the children that changed touch the DOM, so a step that changes
// one stream's state redraws one table row, not all of them.
const keyed = new WeakMap();

export function syncChildren(parent, items) {
  const before = keyed.get(parent) || new Map();
  const after = new Map();
  let cursor = parent.firstChild;
  for (const item of items) {
    const known = before.get(item.key);
    let node;
    if (known && known.sig === item.sig) {
      node = known.node;
      if (item.update) item.update(node);
    } else {
      node = item.build();
      if (known) {
        if (known.node === cursor) cursor = cursor.nextSibling;
        known.node.remove();
      }
      if (item.update) item.update(node);
    }
    before.delete(item.key);
    after.set(item.key, { node, sig: item.sig });
    if (node === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(node, cursor);
  }
  for (const { node } of before.values()) node.remove();
  keyed.set(parent, after);
  return parent;
}

// A control that is hidden, disabled or removed while it has the focus drops the focus to
// <body>: a keyboard or screen-reader user loses their place. keepFocus runs `change`
// and, if the control that had the focus can no longer have it, focuses the first of
// `targets` that can (an element, an id, or a function giving one).
function canFocus(element) {
  return element instanceof HTMLElement && element.isConnected && !element.disabled
    && element.closest("[hidden]") === null && !element.closest("dialog:not([open])");
}

export function keepFocus(change, ...targets) {
  const had = document.activeElement;
  const result = change();
  if (!had || had === document.body || canFocus(had)) return result;
  for (const target of targets) {
    const element = typeof target === "function" ? target() : typeof target === "string" ? document.getElementById(target) : target;
    if (canFocus(element)) {
      element.focus({ preventScroll: true });
      break;
    }
  }
  return result;
}
