// The state view: what each endpoint knows after the step (from Replay.state_after), with
// what the step changed highlighted. Elements carry data-path, the dotted path the API uses
// in `changed` ("client.qpack.local_table.entries.3", "server.streams.4.state").
import { clear, h } from "./dom.js";

const TABLE_TITLES = {
  local_table: "Encoder's dynamic table (filled by this endpoint)",
  remote_table: "Decoder's dynamic table (the peer's, as this endpoint decoded it)",
};

function metric(path, label, value) {
  return h("div", { class: "metric", data: { path } },
    h("span", { class: "metric-label" }, label),
    h("span", { class: "metric-value" }, value === null || value === undefined ? "—" : String(value)));
}

function list(values) {
  return values.length ? values.join(", ") : "none";
}

function dynamicTable(path, table) {
  const inserted = new Set(table.inserted_at_this_step.map((entry) => entry.index));
  const section = h("div", { class: "qpack-table", data: { path } },
    h("h4", {}, TABLE_TITLES[table.owner === "local" ? "local_table" : "remote_table"]),
    h("div", { class: "metrics" },
      metric(`${path}.capacity`, "capacity", table.capacity),
      metric(`${path}.maximum_capacity`, "maximum", table.maximum_capacity),
      metric(`${path}.size`, "size", table.size),
      metric(`${path}.insert_count`, "insert count", table.insert_count)));
  const rows = [];
  for (const entry of [...table.entries].reverse()) {
    const flags = [];
    if (inserted.has(entry.index)) flags.push("inserted");
    if (entry.unacknowledged) flags.push(`unacknowledged (streams ${list(entry.referenced_by || [])})`);
    if (entry.received) flags.push("received");
    if (entry.evictable) flags.push("evictable");
    rows.push(h("tr", { class: inserted.has(entry.index) ? "inserted" : "", data: { path: `${path}.entries.${entry.index}` } },
      h("td", { class: "num" }, entry.index),
      h("td", { class: "name" }, entry.name),
      h("td", { class: "value" }, entry.value),
      h("td", { class: "num" }, entry.size),
      h("td", { class: "flags" }, flags.join(", "))));
  }
  for (const entry of table.evicted_at_this_step) {
    rows.push(h("tr", { class: "evicted" },
      h("td", { class: "num" }, entry.index),
      h("td", { class: "name" }, entry.name),
      h("td", { class: "value" }, entry.value),
      h("td", { class: "num" }, entry.size),
      h("td", { class: "flags" }, "evicted at this step")));
  }
  if (rows.length) {
    section.append(h("table", {},
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "abs"), h("th", { scope: "col" }, "name"),
        h("th", { scope: "col" }, "value"), h("th", { scope: "col" }, "size"),
        h("th", { scope: "col" }, "notes"))),
      h("tbody", {}, rows)));
  } else {
    section.append(h("p", { class: "muted" }, "empty"));
  }
  return section;
}

function settings(path, label, values) {
  const box = h("div", { class: "settings", data: { path } }, h("h4", {}, label));
  if (values === null) {
    box.append(h("p", { class: "muted" }, "not yet"));
  } else if (!values.length) {
    box.append(h("p", { class: "muted" }, "every setting at its default"));
  } else {
    box.append(h("ul", {}, values.map((item) => h("li", {}, `${item.name} = ${item.value}`))));
  }
  return box;
}

function streams(path, all) {
  const ids = Object.keys(all).sort((a, b) => Number(a) - Number(b));
  if (!ids.length) return h("p", { class: "muted" }, "no streams yet");
  return h("table", { class: "streams" },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "stream"), h("th", { scope: "col" }, "type"),
      h("th", { scope: "col" }, "opened by"), h("th", { scope: "col" }, "state"))),
    h("tbody", {}, ids.map((id) => {
      const stream = all[id];
      return h("tr", { class: `st-${stream.type}`, data: { path: `${path}.${id}` } },
        h("td", { class: "num" }, id),
        h("td", {}, stream.type + (stream.push_id !== undefined ? ` (push ${stream.push_id})` : "")),
        h("td", {}, stream.owner === "local" ? "this endpoint" : "the peer"),
        h("td", {}, stream.state));
    })));
}

function endpoint(name, state) {
  const qpack = state.qpack;
  const path = `${name}.qpack`;
  const box = h("section", { class: `endpoint ep-${name}`, "aria-label": name },
    h("h3", {}, name),
    h("div", { class: "metrics" },
      metric(`${path}.known_received_count`, "known received count", qpack.known_received_count),
      metric(`${path}.blocked_streams`, "blocked streams", list(qpack.blocked_streams)),
      metric(`${path}.blocking_streams`, "blocking streams", list(qpack.blocking_streams)),
      metric(`${path}.unacknowledged_sections`, "sections awaiting ack",
        list(qpack.unacknowledged_sections.map((s) => `stream ${s.stream_id} (RIC ${s.required_insert_count})`)))),
    dynamicTable(`${path}.local_table`, qpack.local_table),
    dynamicTable(`${path}.remote_table`, qpack.remote_table),
    h("div", { class: "settings-pair" },
      settings(`${name}.settings.local`, "SETTINGS sent", state.settings.local),
      settings(`${name}.settings.remote`, "SETTINGS received", state.settings.remote)),
    h("h4", {}, "Streams"),
    streams(`${name}.streams`, state.streams));
  if (state.errors.length) {
    box.append(h("h4", {}, "Errors"), h("ul", { class: "errors" },
      state.errors.map((error) => h("li", {}, `step ${error.seq}: ${error.kind} ${error.code_name || ""} ${error.rule || ""}`))));
  }
  return box;
}

export function renderState(container, state, changed) {
  clear(container).append(endpoint("client", state.client), endpoint("server", state.server));
  if (!changed.length) return;
  for (const node of container.querySelectorAll("tr[data-path], .metric[data-path], .settings[data-path]")) {
    const path = node.dataset.path;
    if (changed.some((item) => item === path || item.startsWith(`${path}.`))) {
      node.classList.add("changed");
    }
  }
}
