// The Live page: the list of connections, updated over Socket.IO (namespace /live, room
// "captures"), the readable client's fetch form, rename, delete, export and compare.
// Every value shown comes from the API (rows are computed in h3learn/trace); header values
// from real clients are untrusted and are inserted as text only (dom.js).
import { clear, getJSON, h, keepFocus, syncChildren } from "./dom.js";
import { connectCaptures } from "./live.js";

const $ = (id) => document.getElementById(id);
const rows = new Map(); // id -> row
const selected = new Set();
const renaming = new Set();

function started(text) {
  if (!text) return "";
  const when = new Date(text);
  return Number.isNaN(when.getTime()) ? text : when.toLocaleTimeString();
}

function stateBadge(row) {
  const label = row.state === "live" ? "live"
    : ["closed", "failed"].includes(row.state) ? `${row.state}${row.closed ? ` (${row.closed})` : ""}` : row.state;
  return h("span", { class: `state-badge ${row.state}` }, label);
}

function exportLinks(row) {
  const base = `/api/traces/${encodeURIComponent(row.id)}/download?format=`;
  return [["native", "native"], ["qlog", "qlog"], ["qlog-0.3", "qlog 0.3"]].map(([format, label]) =>
    h("a", { href: base + format, download: "", class: "export", title: `Download as ${label}` }, label));
}

function buildRow(row) {
  const stepLink = row.events
    ? h("a", { href: `/trace/${encodeURIComponent(row.id)}/step/0`, class: "open" }, row.title)
    : h("span", {}, row.title);
  const box = h("input", { type: "checkbox", class: "select", "aria-label": `select ${row.title}` });
  box.checked = selected.has(row.id);
  box.addEventListener("change", () => {
    if (box.checked) selected.add(row.id); else selected.delete(row.id);
    updateCompare();
  });
  const rename = h("button", { type: "button", class: "rename" }, "Rename");
  rename.addEventListener("click", () => { renaming.add(row.id); render(); });
  const remove = h("button", { type: "button", class: "delete", disabled: row.state === "live" }, "Delete");
  remove.addEventListener("click", () => deleteCapture(row));
  const actions = h("td", { class: "actions" }, rename, remove, " Export: ", exportLinks(row));
  if (renaming.has(row.id)) actions.append(renameForm(row));
  const agent = row.view === "client"
    ? `h3learn client → ${row.server_software || "unknown server"}`
    : row.user_agent || "(no request yet)";
  return h("tr", { class: `capture state-${row.state}`, data: { id: row.id } },
    h("td", {}, box),
    h("td", {}, stateBadge(row)),
    h("td", {}, stepLink, h("div", { class: "muted" }, row.view === "client" ? "the client's view" : "the server's view")),
    h("td", { class: "agent" }, h("div", { class: "user-agent" }, agent),
      row.settings_text ? h("div", { class: "settings" }, `SETTINGS: ${row.settings_text}`) : null),
    h("td", {}, started(row.started)),
    h("td", { class: "num requests" }, row.requests ?? 0, rejectedNote(row)),
    h("td", { class: `num ${row.error_count ? "errors-cell" : ""}`, title: (row.errors || []).join("\n") }, row.error_count ?? 0),
    h("td", { class: "num steps" }, row.events ?? 0),
    actions);
}

// Requests the server rejected unprocessed (H3_REQUEST_REJECTED, RFC 9114 §4.1.1), e.g.
// after the limit of requests per connection (its GOAWAY): counted apart from `requests`.
function rejectedNote(row) {
  if (!row.rejected) return null;
  return h("div", {
    class: "rejected",
    title: "rejected unprocessed with H3_REQUEST_REJECTED (RFC 9114 §4.1.1): sent after the server's GOAWAY, "
      + "at its limit of requests per connection",
  }, `+ ${row.rejected} rejected`);
}

// Connections refused at the limit of connections at once have no capture: only a count.
function showRefused(count) {
  const note = $("refused-count");
  if (typeof count !== "number") return;
  const limit = note.dataset.limit;
  note.hidden = count === 0;
  note.textContent = `${count} connection${count === 1 ? "" : "s"} refused`
    + (limit ? ` at the limit of ${limit} at once` : " at the limit of connections")
    + " (CONNECTION_REFUSED, RFC 9000 §20.1): no capture";
}

function renameForm(row) {
  const input = h("input", { type: "text", value: row.title, maxlength: "200", "aria-label": "new title" });
  const form = h("form", { class: "rename-form" }, input, h("button", { type: "submit" }, "Save"));
  const cancel = h("button", { type: "button" }, "Cancel");
  cancel.addEventListener("click", () => { renaming.delete(row.id); render(); });
  form.append(cancel);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const answer = await send(`/api/captures/${encodeURIComponent(row.id)}`, "PATCH", { title: input.value });
    if (answer) {
      renaming.delete(row.id);
      update([answer], []);
    }
  });
  setTimeout(() => input.focus(), 0);
  return form;
}

async function send(url, method, body) {
  $("capture-error").hidden = true;
  let response;
  let answer = null;
  try {
    response = await fetch(url, { method, headers: { "Content-Type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
    if (response.status !== 204) answer = await response.json();
  } catch (failure) {
    answer = { error: failure.message };
  }
  if (!response || !response.ok) {
    $("capture-error").textContent = answer && answer.error ? answer.error : "the request failed";
    $("capture-error").hidden = false;
    return null;
  }
  return answer || {};
}

async function deleteCapture(row) {
  if (!window.confirm(`Delete the capture “${row.title}”?`)) return;
  if (await send(`/api/captures/${encodeURIComponent(row.id)}`, "DELETE")) update([], [row.id]);
}

// A row drawn again (an update, the rename form opened or closed) keeps the focus: on the
// same control in its new row, or on the row's Rename button (the form's buttons went).
function render() {
  const had = document.activeElement;
  const row = had ? had.closest("tr.capture") : null;
  const inRow = (selector) => () => (row ? document.querySelector(`tr[data-id="${CSS.escape(row.dataset.id)}"] ${selector}`) : null);
  const same = had && had.classList.length ? inRow(`.${CSS.escape(had.classList[0])}`) : () => null;
  keepFocus(drawRows, same, inRow(".rename"));
}

function drawRows() {
  const ordered = [...rows.values()].sort((a, b) =>
    String(b.started || "").localeCompare(String(a.started || "")) || b.id.localeCompare(a.id));
  syncChildren($("capture-rows"), ordered.map((row) => ({
    key: row.id,
    sig: JSON.stringify([row, selected.has(row.id), renaming.has(row.id)]),
    build: () => buildRow(row),
  })));
  const live = ordered.filter((row) => row.state === "live").length;
  $("capture-count").textContent = `${ordered.length} capture${ordered.length === 1 ? "" : "s"}, ${live} live`;
  $("no-captures").hidden = ordered.length > 0;
}

function updateCompare() {
  for (const id of [...selected]) if (!rows.has(id)) selected.delete(id);
  const button = $("compare-button");
  const most = Number(button.dataset.max);
  button.disabled = selected.size < 2 || selected.size > most;
  button.textContent = !selected.size ? "Compare selected"
    : selected.size > most ? `Compare selected (${selected.size}): at most ${most} at a time`
      : `Compare selected (${selected.size})`;
}

function update(changed, removed) {
  for (const row of changed) rows.set(row.id, row);
  for (const id of removed) rows.delete(id);
  updateCompare();
  render();
}

$("compare-button").addEventListener("click", () => {
  window.location.assign(`/compare?ids=${[...selected].map(encodeURIComponent).join(",")}`);
});

// -- the readable client ---------------------------------------------------------------

// The number of requests counts only while its section is open; closed, it is disabled,
// so that a value out of range there cannot hold the form back.
$("fetch-header-lines").closest("details").addEventListener("toggle", (event) => {
  $("fetch-times").disabled = !event.target.open;
});

// A field the browser refuses (the number of requests out of range) says so itself: the
// result line of an earlier fetch is cleared, so that it is not read as this one's.
$("fetch-form").addEventListener("invalid", () => {
  $("fetch-result").className = "";
  $("fetch-result").textContent = "";
}, true);

// One fetch at a time from this page: the button waits until the last one is over.
$("fetch-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const button = $("fetch-button");
  if (button.disabled) return;
  button.disabled = true;
  try {
    await fetchOnce();
  } finally {
    button.disabled = false;
  }
});

async function fetchOnce() {
  const result = $("fetch-result");
  result.className = "";
  result.textContent = "Fetching…";
  // The header lines and the number of requests count only while their section is open.
  const own = $("fetch-header-lines").closest("details").open;
  const headers = own ? $("fetch-header-lines").value.split("\n").map((line) => line.trim()).filter((line) => line) : [];
  const times = own ? Number($("fetch-times").value) : 1;
  const job = await postFetch({ url: $("fetch-url").value, insecure: $("fetch-insecure").checked, headers, times });
  if (job.error) {
    result.className = "error";
    result.textContent = `Could not fetch: ${job.error}`;
    return;
  }
  let state = job;
  // The server ends every fetch within its timeout; the page stops asking a while after.
  const waitSeconds = Number($("fetch-form").dataset.waitSeconds);
  const deadline = Date.now() + waitSeconds * 1000;
  while (state.state === "running" && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    try {
      state = await getJSON(`/api/captures/fetch/${state.id}`);
    } catch (failure) {
      state = { state: "failed", error: failure.message };
    }
  }
  clear(result);
  if (state.state === "done") {
    result.append(`${state.url}: HTTP/3 ${state.status}, ${state.body_bytes} bytes. `);
  } else if (state.state === "running") {
    result.append(`No answer yet after ${waitSeconds} s. If the fetch still ends, its connection`
      + " is listed under Connections below. ");
  } else {
    result.className = "error";
    result.append(`Fetch failed: ${state.error || "no answer"}. `);
  }
  if (state.capture) {
    result.append(h("a", { href: `/trace/${encodeURIComponent(state.capture)}/step/0`, id: "fetch-capture" }, "Step through its connection"));
  }
}

async function postFetch(body) {
  try {
    const response = await fetch("/api/captures/fetch", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    return await response.json();
  } catch (failure) {
    return { error: failure.message };
  }
}

// -- live updates ------------------------------------------------------------------------

getJSON("/api/captures").then((answer) => {
  update(answer.captures, []);
  showRefused(answer.refused);
}).catch((failure) => {
  $("capture-error").textContent = `Could not list the captures: ${failure.message}`;
  $("capture-error").hidden = false;
});
connectCaptures($("live-status"), (socket) => {
  socket.emit("watch_list", {}, (answer) => {
    if (answer && answer.captures) {
      rows.clear();
      update(answer.captures, []);
      showRefused(answer.refused);
    }
  });
  if (!socket.h3learnListening) {
    socket.h3learnListening = true;
    socket.on("captures", (batch) => {
      update(batch.captures, batch.removed);
      showRefused(batch.refused);
    });
  }
});
