// The sequence diagram: client and server lifelines, one row per step (an arrow for a
// unit sent or received, a mark for a change inside one endpoint), coloured by stream type.
// The rows come from /api/traces/<id>/events in pages and only the visible ones are in the
// DOM, so a trace of 10,000 steps scrolls as fast as one of 30. The server decides every
// row's direction and stream type; this module only draws them.
import { clear, getJSON, h } from "./dom.js";

const PAGE = 200;
const OVERSCAN = 10;

export class Diagram {
  constructor({ scroller, spacer, counter, traceId, onJump }) {
    this.scroller = scroller;
    this.spacer = spacer;
    this.counter = counter;
    this.traceId = traceId;
    this.onJump = onJump;
    this.filter = "";
    this.total = 0;
    this.pages = new Map();
    this.loading = new Map();
    this.current = 0;
    this.rowHeight = 0;
    this.generation = 0;
    scroller.addEventListener("scroll", () => this.render());
    window.addEventListener("resize", () => this.measureAndRender());
    document.addEventListener("h3learn:projector", () => this.measureAndRender());
  }

  measure() {
    const probe = this.makeRow({ seq: 0, endpoint: "client", direction: "local",
      stream_type: "connection", category: "http3", summary: "probe" });
    probe.classList.add("probe");
    this.spacer.append(probe);
    this.rowHeight = probe.getBoundingClientRect().height || 28;
    probe.remove();
  }

  measureAndRender() {
    this.measure();
    this.spacer.style.height = `${this.total * this.rowHeight}px`;
    this.render();
    this.reveal(false);
  }

  // filter: a query string such as "category=http3,qpack&q=settings" ("" for everything).
  async setFilter(filter) {
    this.filter = filter;
    this.generation += 1;
    this.pages.clear();
    this.loading.clear();
    const first = await this.page(0);
    if (!first) return;
    this.total = first.total;
    if (!this.rowHeight) this.measure();
    this.spacer.style.height = `${this.total * this.rowHeight}px`;
    this.counter.textContent = filter
      ? `${this.total} matching steps`
      : `${this.total} steps`;
    await this.reveal(true);
    this.render();
  }

  async page(index) {
    if (this.pages.has(index)) return this.pages.get(index);
    if (this.loading.has(index)) return this.loading.get(index);
    const generation = this.generation;
    const sep = this.filter ? "&" : "";
    const url = `/api/traces/${encodeURIComponent(this.traceId)}/events?offset=${index * PAGE}&limit=${PAGE}${sep}${this.filter}`;
    const promise = getJSON(url).then((answer) => {
      if (generation !== this.generation) return null;
      this.pages.set(index, answer);
      this.loading.delete(index);
      this.render();
      return answer;
    });
    this.loading.set(index, promise);
    return promise;
  }

  rowAt(position) {
    const answer = this.pages.get(Math.floor(position / PAGE));
    return answer ? answer.events[position % PAGE] : undefined;
  }

  setCurrent(step) {
    this.current = step;
    for (const row of this.spacer.querySelectorAll(".row")) {
      const isCurrent = Number(row.dataset.seq) === step;
      row.classList.toggle("current", isCurrent);
      if (isCurrent) row.setAttribute("aria-current", "step");
      else row.removeAttribute("aria-current");
    }
    this.reveal(false);
  }

  // Scroll so that the current step is visible. Without a filter its position is its seq;
  // with one the server says where it is (`locate`).
  async reveal(fromFilter) {
    let position = this.current;
    if (this.filter) {
      const url = `/api/traces/${encodeURIComponent(this.traceId)}/events?limit=1&locate=${this.current}&${this.filter}`;
      const answer = await getJSON(url);
      if (answer.located === null) return;
      position = answer.located;
    }
    const top = position * this.rowHeight;
    const view = this.scroller.clientHeight;
    const scrolled = this.scroller.scrollTop;
    if (fromFilter || top < scrolled || top + this.rowHeight > scrolled + view) {
      this.scroller.scrollTop = Math.max(0, top - view / 3);
    }
  }

  render() {
    if (!this.rowHeight) return;
    const first = Math.max(0, Math.floor(this.scroller.scrollTop / this.rowHeight) - OVERSCAN);
    const visible = Math.ceil(this.scroller.clientHeight / this.rowHeight) + 2 * OVERSCAN;
    const last = Math.min(this.total, first + visible);
    const rows = [];
    for (let position = first; position < last; position += 1) {
      const row = this.rowAt(position);
      if (row === undefined) {
        this.page(Math.floor(position / PAGE));
        continue;
      }
      const node = this.makeRow(row);
      node.style.top = `${position * this.rowHeight}px`;
      rows.push(node);
    }
    clear(this.spacer).append(...rows);
  }

  makeRow(row) {
    const side = row.endpoint === "server" ? "server" : "client";
    const node = h(
      "button",
      {
        type: "button",
        role: "listitem",
        class: `row st-${row.stream_type} dir-${row.direction} ep-${side} cat-${row.category}`
          + (row.seq === this.current ? " current" : ""),
        data: { seq: row.seq },
        "aria-current": row.seq === this.current ? "step" : null,
        title: `step ${row.seq}: ${row.summary}`,
      },
      h("span", { class: "seq" }, row.seq),
      h("span", { class: "lanes", "aria-hidden": "true" }, h("span", { class: "mark" })),
      h("span", { class: "text" }, row.summary),
    );
    node.addEventListener("click", () => this.onJump(row.seq));
    return node;
  }
}
