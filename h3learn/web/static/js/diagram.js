// The sequence diagram: client and server lifelines, one row per step (an arrow for a
// unit sent or received, a mark for a change inside one endpoint), coloured by stream type.
// The rows come from /api/traces/<id>/events in pages and only the visible ones are in the
// DOM, so a trace of 10,000 steps scrolls as fast as one of 30. The server decides every
// row's direction and stream type; this module only draws them.
//
// A lesson may hold back the steps from `hiddenFrom` on (a question before them is not
// answered yet, lesson.js): their rows are drawn as "hidden", nothing of them is fetched
// (every request carries `until`), and a search covers only the steps before them.
//
// Speed: a row, once drawn, stays until it scrolls out of view (moving to the next step
// only moves the highlight between two rows); the scroll position and the height of the
// view are remembered from scroll and resize events rather than read back from the layout,
// so stepping never forces the browser to lay the page out in the middle of a redraw.
import { getJSON, h } from "./dom.js";

const PAGE = 200;
const OVERSCAN = 10;

export class Diagram {
  constructor({ scroller, spacer, counter, traceId, count, current, hiddenFrom = null, onJump }) {
    this.scroller = scroller;
    this.spacer = spacer;
    this.counter = counter;
    this.traceId = traceId;
    this.count = count;
    this.onJump = onJump;
    this.filter = "";
    this.hiddenFrom = hiddenFrom;
    this.total = 0;
    this.pages = new Map();
    this.loading = new Map();
    this.nodes = new Map(); // position -> row node in the DOM
    this.current = current;
    this.currentNode = null;
    this.rowHeight = 0;
    this.scrollTop = 0;
    this.viewHeight = 0;
    this.generation = 0;
    this.frame = 0;
    scroller.addEventListener("scroll", () => {
      this.scrollTop = scroller.scrollTop;
      this.schedule();
    });
    spacer.addEventListener("click", (event) => {
      const node = event.target instanceof Element ? event.target.closest(".row") : null;
      if (node) this.onJump(Number(node.dataset.seq));
    });
    new ResizeObserver(() => {
      this.viewHeight = scroller.clientHeight;
      this.schedule();
    }).observe(scroller);
    window.addEventListener("resize", () => this.remeasure());
    document.addEventListener("h3learn:projector", () => this.remeasure());
  }

  measure() {
    const probe = this.makeRow({ seq: 0, endpoint: "client", direction: "local",
      stream_type: "connection", category: "http3", summary: "probe" });
    probe.classList.add("probe");
    this.spacer.append(probe);
    this.rowHeight = probe.getBoundingClientRect().height || 28;
    this.viewHeight = this.scroller.clientHeight;
    this.scrollTop = this.scroller.scrollTop;
    probe.remove();
  }

  // A new row height (projector mode, a resize): every row is placed again.
  remeasure() {
    this.measure();
    this.dropRows();
    this.spacer.style.height = `${this.total * this.rowHeight}px`;
    this.reveal(false);
    this.render();
  }

  dropRows() {
    for (const node of this.nodes.values()) node.remove();
    this.nodes.clear();
    this.currentNode = null;
  }

  // filter: a query string such as "category=http3,qpack&q=settings" ("" for everything).
  // Without a filter the rows are the steps themselves, so the total is known and the first
  // page fetched is the one with the current step.
  // The rows drawn stay until the first page of the new selection is in, so the diagram
  // never flashes empty while a filter is applied.
  // A filter the server refuses (a bad stream ID) leaves the previous one in place, and the
  // error goes to the caller.
  async setFilter(filter, { scroll = true } = {}) {
    const previous = { filter: this.filter, pages: this.pages };
    this.filter = filter;
    this.generation += 1;
    this.pages = new Map();
    this.loading = new Map();
    if (!this.rowHeight) this.measure();
    if (filter) {
      let first;
      try {
        first = await this.page(0);
      } catch (failure) {
        this.filter = previous.filter;
        this.pages = previous.pages;
        this.generation += 1;
        throw failure;
      }
      if (!first) return;
      this.total = first.total;
    } else {
      this.total = this.count;
    }
    this.dropRows();
    this.spacer.style.height = `${this.total * this.rowHeight}px`;
    this.showCount();
    await this.reveal(scroll);
    this.render();
  }

  showCount() {
    const noun = this.total === 1 ? "step" : "steps";
    if (!this.filter) {
      this.counter.textContent = `${this.total} ${noun}`;
    } else if (this.hiddenFrom === null) {
      this.counter.textContent = `${this.total} matching ${noun}`;
    } else {
      this.counter.textContent = `${this.total} matching ${noun} before step ${this.hiddenFrom}; `
        + "the later ones are searched once its question is answered";
    }
  }

  // The lesson holds back the steps from `from` on (null: none). Without a filter the rows
  // before the old and the new point stay drawn, and only the steps in between are fetched.
  setHidden(from) {
    if (from === this.hiddenFrom) return Promise.resolve();
    const moved = Math.min(from ?? Infinity, this.hiddenFrom ?? Infinity);
    this.hiddenFrom = from;
    if (this.filter) return this.setFilter(this.filter, { scroll: false });
    this.generation += 1;
    this.loading = new Map();
    for (const index of [...this.pages.keys()]) {
      if ((index + 1) * PAGE > moved) this.pages.delete(index);
    }
    for (const [position, node] of this.nodes) {
      if (position < moved) continue;
      node.remove();
      this.nodes.delete(position);
      if (node === this.currentNode) this.currentNode = null;
    }
    this.render();
    return Promise.resolve();
  }

  // The arguments every request for rows carries: the filter, and where the hidden steps start.
  query() {
    const parts = [this.filter, this.hiddenFrom === null ? "" : `until=${this.hiddenFrom}`];
    return parts.filter(Boolean).map((part) => `&${part}`).join("");
  }

  page(index) {
    if (this.pages.has(index)) return Promise.resolve(this.pages.get(index));
    if (this.loading.has(index)) return this.loading.get(index);
    const generation = this.generation;
    const url = `/api/traces/${encodeURIComponent(this.traceId)}/events?offset=${index * PAGE}&limit=${PAGE}${this.query()}`;
    const promise = getJSON(url).then((answer) => {
      if (generation !== this.generation) return null;
      this.pages.set(index, answer);
      this.loading.delete(index);
      this.schedule();
      return answer;
    }, (failure) => {
      this.loading.delete(index);
      throw failure;
    });
    this.loading.set(index, promise);
    return promise;
  }

  // A live capture grew to `count` steps; `rows` are the new steps' rows (or [] when the
  // batch was too large to carry them: they are fetched when they scroll into view).
  async grow(count, rows) {
    this.count = count;
    if (this.filter) {
      const last = Math.max(0, Math.floor((this.total - 1) / PAGE));
      this.pages.delete(last);
      const answer = await this.page(last);
      if (!answer) return;
      this.total = answer.total;
    } else {
      for (const row of rows) {
        const page = this.pages.get(Math.floor(row.seq / PAGE));
        if (page && page.events.length === row.seq % PAGE) page.events.push(row);
      }
      this.total = count;
    }
    this.spacer.style.height = `${this.total * this.rowHeight}px`;
    this.showCount();
    this.render();
  }

  rowAt(position) {
    if (!this.filter && this.hiddenFrom !== null && position >= this.hiddenFrom) {
      return { seq: position, hidden: true };
    }
    const answer = this.pages.get(Math.floor(position / PAGE));
    return answer ? answer.events[position % PAGE] : undefined;
  }

  setCurrent(step) {
    this.current = step;
    if (this.currentNode) this.markCurrent(this.currentNode, false);
    this.currentNode = null;
    const position = this.positionOf(step);
    const node = position === null ? undefined : this.nodes.get(position);
    if (node && Number(node.dataset.seq) === step) {
      this.markCurrent(node, true);
      this.currentNode = node;
    }
    this.reveal(false);
  }

  markCurrent(node, on) {
    node.classList.toggle("current", on);
    if (on) node.setAttribute("aria-current", "step");
    else node.removeAttribute("aria-current");
  }

  // Where step `seq` is among the rows: itself without a filter; with one, found in the
  // pages already fetched (rows are in seq order), else unknown (null) until asked.
  positionOf(seq) {
    if (!this.filter) return seq;
    for (const [index, answer] of this.pages) {
      const rows = answer.events;
      if (!rows.length || seq < rows[0].seq || seq > rows[rows.length - 1].seq) continue;
      let low = 0;
      let high = rows.length - 1;
      while (low <= high) {
        const middle = (low + high) >> 1;
        if (rows[middle].seq === seq) return index * PAGE + middle;
        if (rows[middle].seq < seq) low = middle + 1;
        else high = middle - 1;
      }
      return null; // inside a fetched page, but not a matching row
    }
    return undefined;
  }

  // Scroll so that the current step is visible. Without a filter its position is its seq;
  // with one it is looked up in the fetched pages, or the server says where it is (`locate`).
  async reveal(fromFilter) {
    let position = this.positionOf(this.current);
    if (position === undefined) {
      const url = `/api/traces/${encodeURIComponent(this.traceId)}/events?limit=1&locate=${this.current}${this.query()}`;
      const generation = this.generation;
      const answer = await getJSON(url);
      if (generation !== this.generation) return;
      position = answer.located;
    }
    if (position === null) return;
    const top = position * this.rowHeight;
    const view = this.viewHeight;
    if (fromFilter || top < this.scrollTop || top + this.rowHeight > this.scrollTop + view) {
      this.scrollTop = Math.max(0, Math.round(top - view / 3));
      this.scroller.scrollTop = this.scrollTop;
      this.render(); // now, not at the scroll event: the current row is drawn in this frame
    }
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  render() {
    if (!this.rowHeight) return;
    const first = Math.max(0, Math.floor(this.scrollTop / this.rowHeight) - OVERSCAN);
    const visible = Math.ceil(this.viewHeight / this.rowHeight) + 2 * OVERSCAN;
    const last = Math.min(this.total, first + visible);
    for (const [position, node] of this.nodes) {
      if (position < first || position >= last) {
        node.remove();
        this.nodes.delete(position);
        if (node === this.currentNode) this.currentNode = null;
      }
    }
    const added = [];
    for (let position = first; position < last; position += 1) {
      if (this.nodes.has(position)) continue;
      const row = this.rowAt(position);
      if (row === undefined) {
        const index = Math.floor(position / PAGE);
        const short = this.pages.get(index);
        if (short && short.events.length < PAGE && index * PAGE + short.events.length < this.total) {
          this.pages.delete(index); // fetched before a live capture grew past it
        }
        this.page(index).catch(() => {}); // setFilter reports errors
        continue;
      }
      const node = this.makeRow(row);
      node.style.top = `${position * this.rowHeight}px`;
      this.nodes.set(position, node);
      if (row.seq === this.current) this.currentNode = node;
      added.push([position, node]);
    }
    if (added.length) this.place(added);
  }

  // New rows go into the page in step order, among the rows already there, so that Tab and
  // a screen reader meet them in the order they are drawn (rows already placed, one of them
  // perhaps focused, are never moved).
  place(added) {
    const fresh = new Set(added.map(([, node]) => node));
    const placed = [...this.nodes].filter(([, node]) => !fresh.has(node)).sort((a, b) => a[0] - b[0]);
    let next = 0;
    for (const [position, node] of added) { // in ascending position
      while (next < placed.length && placed[next][0] < position) next += 1;
      const before = next < placed.length ? placed[next][1] : null;
      this.spacer.insertBefore(node, before);
    }
  }

  makeRow(row) {
    if (row.hidden) {
      const why = `hidden until the question before step ${this.hiddenFrom} is answered`;
      return h(
        "button",
        { type: "button", class: "row held", data: { seq: row.seq }, title: `step ${row.seq}: ${why}` },
        h("span", { class: "seq" }, row.seq),
        h("span", { class: "lanes", "aria-hidden": "true" }),
        h("span", { class: "text" }, why),
      );
    }
    const side = row.endpoint === "server" ? "server" : "client";
    const isCurrent = row.seq === this.current;
    return h(
      "button",
      {
        type: "button",
        class: `row st-${row.stream_type} dir-${row.direction} ep-${side} cat-${row.category}`
          + (isCurrent ? " current" : ""),
        data: { seq: row.seq },
        "aria-current": isCurrent ? "step" : null,
        title: `step ${row.seq}: ${row.summary}`,
      },
      h("span", { class: "seq" }, row.seq),
      h("span", { class: "lanes", "aria-hidden": "true" }, h("span", { class: "mark" })),
      h("span", { class: "text" }, row.summary),
    );
  }
}
