// The state view: what each endpoint knows after the step (from Replay.state_after), with
// what the step changed highlighted. Elements carry data-path, the dotted path the API uses
// in `changed` ("client.qpack.local_table.entries.3", "server.streams.4.state").
//
// A trace of 10,000 steps has hundreds of streams, so the view is not rebuilt at each
// step: every block and table row has a key and a signature (the text it shows and whether
// it is marked changed), and `syncChildren` redraws only those whose signature differs.
import { h, syncChildren } from "./dom.js";

// More streams than this, and the complete ones are folded into one row (see streams()).
const COMPACT_STREAMS = 12;

const TABLE_TITLES = {
  local: "Encoder's dynamic table (filled by this endpoint)",
  remote: "Decoder's dynamic table (the peer's, as this endpoint decoded it)",
};

// Every changed path and all its ancestors: an element is marked when its own path is in
// this set, that is when it or something inside it changed.
function changedSet(changed) {
  const marks = new Set();
  for (const path of changed) {
    let end = path.length;
    while (end > 0) {
      marks.add(path.slice(0, end));
      end = path.lastIndexOf(".", end - 1);
    }
  }
  return marks;
}

function list(values) {
  return values.length ? values.join(", ") : "none";
}

function shown(value) {
  return value === null || value === undefined ? "—" : String(value);
}

// A block whose content is `build()`, redrawn when `data` or the marks of `paths` change.
function block(key, data, paths, marks, build) {
  return { key, sig: JSON.stringify([data, paths.map((path) => marks.has(path))]), build };
}

function metrics(key, items, marks) {
  // items: [[path, label, value], ...]
  return block(key, items, items.map(([path]) => path), marks, () => h("div", { class: "metrics" },
    items.map(([path, label, value]) => h("div",
      { class: marks.has(path) ? "metric changed" : "metric", data: { path } },
      h("span", { class: "metric-label" }, label),
      h("span", { class: "metric-value" }, shown(value))))));
}

// A table whose rows are synced one by one; `rows` are syncChildren items building <tr>s.
function table(key, className, headings, rows, empty) {
  if (!rows.length) {
    return { key: `${key}-empty`, sig: empty, build: () => h("p", { class: "muted" }, empty) };
  }
  return {
    key,
    sig: "",
    build: () => h("table", { class: className },
      h("thead", {}, h("tr", {}, headings.map((text) => h("th", { scope: "col" }, text)))),
      h("tbody")),
    update: (node) => syncChildren(node.tBodies[0], rows),
  };
}

function row(key, className, path, cells) {
  return {
    key,
    sig: JSON.stringify([className, cells]),
    build: () => h("tr", { class: className, data: path ? { path } : {} },
      cells.map(([cls, text]) => h("td", { class: cls }, text))),
  };
}

function entryCells(entry, notes) {
  return [["num", entry.index], ["name", entry.name], ["value", entry.value],
    ["num", entry.size], ["flags", notes]];
}

function dynamicTable(path, qpackTable, marks) {
  const inserted = new Set(qpackTable.inserted_at_this_step.map((entry) => entry.index));
  const rows = [];
  for (const entry of [...qpackTable.entries].reverse()) {
    const notes = [];
    if (inserted.has(entry.index)) notes.push("inserted");
    if (entry.unacknowledged) notes.push(`unacknowledged (streams ${list(entry.referenced_by || [])})`);
    if (entry.received) notes.push("received");
    if (entry.evictable) notes.push("evictable");
    const entryPath = `${path}.entries.${entry.index}`;
    const classes = [inserted.has(entry.index) ? "inserted" : "", marks.has(entryPath) ? "changed" : ""];
    rows.push(row(entry.index, classes.join(" ").trim(), entryPath, entryCells(entry, notes.join(", "))));
  }
  for (const entry of qpackTable.evicted_at_this_step) {
    rows.push(row(`evicted-${entry.index}`, "evicted", null, entryCells(entry, "evicted at this step")));
  }
  const title = TABLE_TITLES[qpackTable.owner === "local" ? "local" : "remote"];
  return {
    key: path,
    sig: "",
    build: () => h("div", { class: "qpack-table", data: { path } }),
    update: (node) => syncChildren(node, [
      { key: "title", sig: title, build: () => h("h4", {}, title) },
      metrics("metrics", [
        [`${path}.capacity`, "capacity", qpackTable.capacity],
        [`${path}.maximum_capacity`, "maximum", qpackTable.maximum_capacity],
        [`${path}.size`, "size", qpackTable.size],
        [`${path}.insert_count`, "insert count", qpackTable.insert_count]], marks),
      table("entries", "entries", ["abs", "name", "value", "size", "notes"], rows, "empty"),
    ]),
  };
}

function settings(path, label, values, marks) {
  return block(path, values, [path], marks, () => {
    const box = h("div", { class: marks.has(path) ? "settings changed" : "settings", data: { path } },
      h("h4", {}, label));
    if (values === null) box.append(h("p", { class: "muted" }, "not yet"));
    else if (!values.length) box.append(h("p", { class: "muted" }, "every setting at its default"));
    else box.append(h("ul", {}, values.map((item) => h("li", {}, `${item.name} = ${item.value}`))));
    return box;
  });
}

// Streams in ID order. A long trace has hundreds of finished request streams: those that
// are complete (and did not change at this step) are folded into one last row that lists
// their IDs, so the rows left are the streams a learner is watching.
function streams(path, all, marks) {
  const ids = Object.keys(all).sort((a, b) => Number(a) - Number(b));
  const complete = [];
  const rows = [];
  for (const id of ids) {
    const stream = all[id];
    const streamPath = `${path}.${id}`;
    if (stream.state === "complete" && !marks.has(streamPath) && ids.length > COMPACT_STREAMS) {
      complete.push(id);
      continue;
    }
    rows.push(row(id, `st-${stream.type}${marks.has(streamPath) ? " changed" : ""}`, streamPath, [
      ["num", id],
      ["", stream.type + (stream.push_id !== undefined ? ` (push ${stream.push_id})` : "")],
      ["", stream.owner === "local" ? "this endpoint" : "the peer"],
      ["", stream.state]]));
  }
  if (complete.length) {
    const ids = complete.join(", ");
    rows.push({
      key: "complete",
      sig: ids,
      build: () => h("tr", { class: "complete-group" }, h("td", { colspan: "4" },
        h("details", {}, h("summary", {}, `and ${complete.length} complete streams`), ids))),
    });
  }
  const heading = `Streams (${ids.length})`;
  return [
    { key: "streams-title", sig: heading, build: () => h("h4", {}, heading) },
    {
      key: "streams",
      sig: "",
      build: () => h("div", { class: "streams-box", tabindex: "0", role: "region", "aria-label": `${path.split(".")[0]} streams` }),
      update: (node) => syncChildren(node, [
        table("table", "streams", ["stream", "type", "opened by", "state"], rows, "no streams yet")]),
    },
  ];
}

// RFC 9114 §5.2, §4.6: [record, direction, label, the endpoints it is listed for]. A
// direction is listed for the endpoint that uses it (a client sends MAX_PUSH_ID, a server
// PUSH_PROMISE), and for the other too once the trace has something in it.
const CONNECTION_ITEMS = [
  ["goaway", "sent", "GOAWAY sent", ["client", "server"]],
  ["goaway", "received", "GOAWAY received", ["client", "server"]],
  ["max_push_id", "sent", "MAX_PUSH_ID sent", ["client"]],
  ["max_push_id", "received", "MAX_PUSH_ID received", ["server"]],
  ["pushes_promised", "sent", "pushes promised", ["server"]],
  ["pushes_promised", "received", "pushes promised to it", ["client"]],
  ["pushes_cancelled", "sent", "CANCEL_PUSH sent", ["client", "server"]],
  ["pushes_cancelled", "received", "CANCEL_PUSH received", ["client", "server"]],
];

// RFC 9114 §5.3, §8: "open", or how the connection ended and who ended it.
function closedText(closed) {
  if (!closed) return "open";
  if (closed.clean === null) {
    return `closed: CONNECTION_CLOSE ${closed.direction} (its code is not in this trace)`;
  }
  const how = closed.clean ? "closed cleanly" : "closed with an error";
  const by = closed.direction === "sent" ? "by this endpoint"
    : closed.layer === "quic" ? "by QUIC" : "by the peer";
  return `${how} ${by}: ${closed.code_name || closed.code}`;
}

function connection(name, state, marks) {
  const path = `${name}.connection`;
  const items = [];
  for (const [record, direction, label, usedBy] of CONNECTION_ITEMS) {
    const value = state[record][direction];
    const empty = value === null || (Array.isArray(value) && !value.length);
    if (!usedBy.includes(name) && empty) continue;
    items.push([`${path}.${record}.${direction}`, label, Array.isArray(value) ? list(value) : value]);
  }
  return {
    key: "connection",
    sig: "",
    build: () => h("div", { class: "connection", data: { path } }),
    update: (node) => syncChildren(node, [
      { key: "title", sig: "Connection", build: () => h("h4", {}, "Connection") },
      // How it ended on a line of its own, above the frames that led there.
      metrics("closed", [[`${path}.closed`, "connection", closedText(state.closed)]], marks),
      metrics("metrics", items, marks)]),
  };
}

function errors(state) {
  return block("errors", state.errors, [], new Set(), () => (state.errors.length
    ? h("div", {}, h("h4", {}, "Errors"), h("ul", { class: "errors" },
      state.errors.map((error) => h("li", {}, `step ${error.seq}: ${error.kind} ${error.code_name || ""} ${error.rule || ""}`))))
    : h("div", { hidden: true })));
}

function endpointItems(name, state, marks) {
  const qpack = state.qpack;
  const path = `${name}.qpack`;
  return [
    { key: "title", sig: name, build: () => h("h3", {}, name) },
    metrics("metrics", [
      [`${path}.known_received_count`, "known received count", qpack.known_received_count],
      [`${path}.blocked_streams`, "blocked streams", list(qpack.blocked_streams)],
      [`${path}.blocking_streams`, "blocking streams", list(qpack.blocking_streams)],
      [`${path}.unacknowledged_sections`, "sections awaiting ack",
        list(qpack.unacknowledged_sections.map((s) => `stream ${s.stream_id} (RIC ${s.required_insert_count})`))]], marks),
    dynamicTable(`${path}.local_table`, qpack.local_table, marks),
    dynamicTable(`${path}.remote_table`, qpack.remote_table, marks),
    {
      key: "settings",
      sig: "",
      build: () => h("div", { class: "settings-pair" }),
      update: (node) => syncChildren(node, [
        settings(`${name}.settings.local`, "SETTINGS it sends", state.settings.local, marks),
        settings(`${name}.settings.remote`, "SETTINGS it received", state.settings.remote, marks)]),
    },
    connection(name, state.connection, marks),
    ...streams(`${name}.streams`, state.streams, marks),
    errors(state),
  ];
}

// `observed`: the endpoints the trace has events of. A capture records one side only; the
// other side's column says so rather than showing a state nobody recorded.
export function renderState(container, state, changed, observed = ["client", "server"]) {
  const marks = changedSet(changed);
  syncChildren(container, ["client", "server"].map((name) => {
    const seen = observed.includes(name);
    return {
      key: name,
      sig: `${name} ${seen}`,
      build: () => h("section", { class: `endpoint ep-${name}`, "aria-label": name }),
      update: (node) => syncChildren(node, seen ? endpointItems(name, state[name], marks) : [
        { key: "title", sig: name, build: () => h("h3", {}, name) },
        {
          key: "unobserved",
          sig: "unobserved",
          build: () => h("p", { class: "muted unobserved" },
            `Not observed: this trace records only the ${observed.join(" and ") || "other"}'s`
            + ` side. What the ${name} knows shows only through what it sent.`),
        }]),
    };
  }));
}
