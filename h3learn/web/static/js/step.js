// The step-through page: one step at a time, with its own URL (/trace/<id>/step/<n>).
// Controls: buttons, a jump box, play at a chosen speed, and the keyboard (← → Space Home
// End ?). Each step's event, bytes and state come from /api/traces/<id>/steps/<n>.
import { renderBytes, link } from "./bytes.js";
import { Diagram } from "./diagram.js";
import { clear, getJSON, h, keepFocus } from "./dom.js";
import { followCapture } from "./capture_follow.js";
import { connectLive } from "./live.js";
import { renderState } from "./state.js";
import { renderAnnotations } from "./rfc_notes.js";
import { toggleProjector } from "./theme.js";

const root = document.getElementById("stepper");
const traceId = root.dataset.trace;
// Where each step lives: /trace/<id>/step/<n>, or /lesson/<id>/step/<n> on a lesson's page.
const base = root.dataset.base || `/trace/${encodeURIComponent(traceId)}`;
let count = Number(root.dataset.count); // grows while a live capture runs (capture_follow.js)
const $ = (id) => document.getElementById(id);
// A lesson holds back the steps past a question not yet answered (lesson.js sets
// data-hidden-from and says "h3learn:hidden" when it moves): this page fetches none of
// them, not even ahead of time. null: every step may be fetched.
const readHidden = () => (root.dataset.hiddenFrom === undefined ? null : Number(root.dataset.hiddenFrom));
let hiddenFrom = readHidden();

const cache = new Map();
const CACHE_LIMIT = 64;
let current = Number(root.dataset.step);
let wanted = current;
let timer = null;

function fetchStep(step) {
  if (!cache.has(step)) {
    const promise = getJSON(`/api/traces/${encodeURIComponent(traceId)}/steps/${step}`);
    promise.catch(() => cache.delete(step));
    cache.set(step, promise);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value);
  }
  return cache.get(step);
}

function clamp(step) {
  return Math.min(count - 1, Math.max(0, step));
}

// `by` says who asked for the step: "user" (a button, key, click, jump or play), "load",
// or "room" (a classroom following its teacher); listeners added with `stepper.onStep`
// hear it after the step is shown. A lesson (lesson.js) may stop the learner before a
// step: "h3learn:beforestep" is cancelable. After each step is drawn, "h3learn:step" says
// which one it was; another module can move the page with "h3learn:go" ({step}).
async function go(step, { push = false, by = "user" } = {}) {
  if (by === "user") pendingShow = null;
  step = clamp(step);
  const asked = new CustomEvent("h3learn:beforestep", { cancelable: true, detail: { step, current, by } });
  if (!root.dispatchEvent(asked)) {
    setPlaying(false);
    return;
  }
  wanted = step;
  let answer;
  try {
    answer = await fetchStep(step);
  } catch (failure) {
    if (wanted !== step) return;
    $("step-error").textContent = `Could not load step ${step}: ${failure.message}`;
    $("step-error").hidden = false;
    return;
  }
  if (wanted !== step) return; // a later request won
  const forwards = step >= current;
  current = step;
  render(answer);
  setAddress(step, answer.title, push);
  for (const listener of stepListeners) listener(step, by);
  root.dispatchEvent(new CustomEvent("h3learn:step", { detail: { step, answer } }));
  const ahead = forwards ? step + 1 : step - 1; // the step a learner most likely wants next
  if (ahead >= 0 && ahead < count && (hiddenFrom === null || ahead < hiddenFrom)) fetchStep(ahead);
}

// The address bar (/trace/<id>/step/<n>) and the window title follow the step. A jump is a
// new history entry; stepping replaces the current one, at most every ADDRESS_MS while keys
// are held or the trace plays (browsers limit how often a page may change its address, and
// each change costs the browser some work), and always for the step finally shown.
const ADDRESS_MS = 250;
let addressTimer = null;
let addressChanged = -Infinity;

function setAddress(step, title, push) {
  clearTimeout(addressTimer);
  addressTimer = null;
  const now = performance.now();
  if (push || now - addressChanged >= ADDRESS_MS) {
    addressChanged = now;
    const url = `${base}/step/${step}${location.search}`;
    if (push) history.pushState({ step }, "", url);
    else history.replaceState({ step }, "", url);
    document.title = `${title}: step ${step} · h3learn`;
    return;
  }
  addressTimer = setTimeout(() => setAddress(step, title, false), ADDRESS_MS - (now - addressChanged));
}

function fact(term, value) {
  return [h("dt", {}, term), h("dd", {}, value)];
}

// The diagram first: it only writes (its geometry is remembered, not measured), so nothing
// below forces a layout half-way through the redraw.
function render(answer) {
  const event = answer.event;
  diagram.setCurrent(answer.step);
  $("step-error").hidden = true;
  $("step-number").textContent = String(answer.step);
  root.dataset.shown = String(answer.step); // the step drawn, not just asked for (the page opens with its number)
  $("jump").value = String(answer.step);
  $("step-summary").textContent = event.summary;
  clear($("step-facts")).append(
    ...fact("endpoint", event.endpoint),
    ...fact("event", `${event.category} ${event.name}`),
    ...fact("stream", event.stream_id === null ? "none (connection)" : `${event.stream_id} (${event.stream_type})`),
    ...fact("direction", { sent: "sent to the peer", received: "received from the peer", local: "inside this endpoint" }[event.direction]),
    ...fact("time", `${event.time} ms`),
    ...fact("bytes", event.length ? String(event.length) : "none shown"));
  $("step-changed").textContent = answer.changed.length
    ? `Changed: ${answer.changed.join(", ")}`
    : "Nothing in the state changed at this step.";
  if (shownStream !== event.stream_id) {
    shownStream = event.stream_id;
    updateStreamButton();
  }
  renderBytes($("bytes"), event);
  renderRfc(event);
  renderState($("state"), answer.state, answer.changed, answer.observed);
  updateButtons();
  updateHandoutLink();
}

// A button disabled with the focus on it (Next at the last step) hands the focus to the
// one going the other way, or to the step's heading.
const OTHER_WAY = { first: "next", prev: "next", next: "prev", last: "prev" };
function updateButtons() {
  const focused = document.activeElement ? document.activeElement.id : "";
  keepFocus(() => {
    for (const [id, disabled] of [["first", current === 0], ["prev", current === 0],
      ["next", current === count - 1], ["last", current === count - 1]]) {
      $(id).disabled = disabled;
    }
  }, OTHER_WAY[focused], "step-heading");
}

// Steps in a row often cite the same sections (a run of DATA frames): the panel is then
// left as it is, so a section the learner folded stays folded, and its long text is not laid
// out again.
let shownRfc = null;

function renderRfc(event) {
  const cited = JSON.stringify([event.rfc.map((rfc) => rfc.section), event.field_rfc.map((rfc) => rfc.section)]);
  if (cited === shownRfc) return;
  shownRfc = cited;
  const box = clear($("rfc"));
  if (!event.rfc.length && !event.field_rfc.length) {
    box.append(h("p", { class: "muted" }, "This step cites no section."));
    return;
  }
  const item = (rfc) => h("li", {}, link(rfc), rfc.title ? ` ${rfc.title}` : "");
  if (event.rfc.length) {
    box.append(h("p", {}, "This step is governed by:"), h("ul", { class: "rfc-list" }, event.rfc.map(item)));
    box.append(...renderAnnotations(event.rfc));
  }
  if (event.field_rfc.length) {
    box.append(h("p", {}, "Its fields are defined in:"), h("ul", { class: "rfc-list" }, event.field_rfc.map(item)));
  }
}

// -- play --------------------------------------------------------------------------------

function setPlaying(on) {
  if (timer !== null) clearInterval(timer);
  timer = null;
  if (on && current < count - 1) {
    const speed = Number($("speed").value) || 1;
    timer = setInterval(() => {
      if (current >= count - 1) setPlaying(false);
      else go(current + 1);
    }, 1000 / speed);
  }
  const playing = timer !== null;
  $("play").setAttribute("aria-pressed", String(playing));
  $("play").textContent = playing ? "❚❚ Pause" : "▶ Play";
}

function togglePlay() {
  setPlaying(timer === null);
}

// -- wiring ------------------------------------------------------------------------------

const diagram = new Diagram({
  scroller: $("diagram"),
  spacer: $("diagram-spacer"),
  counter: $("diagram-count"),
  traceId,
  count,
  current,
  hiddenFrom,
  onJump: (step) => go(step, { push: true }),
});

// The handout and the downloads hold every step: while steps are held back, the handout
// covers the steps before them, and the downloads wait until nothing is held back. The
// handout link carries the step shown (`step=`), so the handout's "Back" link returns to it
// (and, with no range given, the handout prints the block of steps that holds it), and
// opens at that step's block (`#step-N`).
const HANDOUT_MAX = 200; // the most steps one handout holds (h3learn/web/handout.py)
const handoutLink = $("handout-link");
const handoutHref = handoutLink.getAttribute("href");
function updateHandoutLink() {
  const range = hiddenFrom === null ? ""
    : `&from=${Math.max(0, hiddenFrom - HANDOUT_MAX)}&to=${hiddenFrom - 1}`;
  handoutLink.href = `${handoutHref}?step=${current}${range}#step-${current}`;
}
function holdBack() {
  updateHandoutLink();
  $("downloads").hidden = hiddenFrom !== null;
  $("downloads-held").hidden = hiddenFrom === null;
}
holdBack();
root.addEventListener("h3learn:hidden", () => {
  hiddenFrom = readHidden();
  holdBack();
  redraw(() => diagram.setHidden(hiddenFrom));
});

function filterQuery() {
  const parts = [];
  for (const name of ["category", "direction"]) {
    const boxes = [...document.querySelectorAll(`.filters input[name=${name}]`)];
    const on = boxes.filter((box) => box.checked).map((box) => box.value);
    if (on.length !== boxes.length) parts.push(`${name}=${on.length ? on.join(",") : "none"}`);
  }
  const query = $("search").value.trim();
  if (query) parts.push(`q=${encodeURIComponent(query)}`);
  const streams = streamFilter();
  if (streams) parts.push(`stream=${encodeURIComponent(streams)}`);
  return parts.join("&");
}

// The stream box as the API's `stream` argument ("0,4"); the server checks it.
function streamFilter() {
  return $("stream-filter").value.replace(/\s+/g, "").replace(/^,+|,+$/g, "");
}

// The diagram's rows, fetched again (a new filter, steps no longer held back); a refusal
// or a failure is said under the filters, in words, and the diagram keeps the rows of the
// last filter that worked. A stream box the server refuses (a stream the trace does not
// have, text that is not a stream ID) is marked invalid; the server's answer names what
// was wrong and the trace's streams.
let appliedStreams = ""; // the stream box's value the diagram's rows were chosen by
async function redraw(change) {
  const error = $("stream-filter-error");
  const box = $("stream-filter");
  try {
    await change();
    error.hidden = true;
    box.removeAttribute("aria-invalid");
    appliedStreams = streamFilter();
  } catch (failure) {
    const still = appliedStreams ? `the streams last asked for (${appliedStreams.replace(/,/g, ", ")})`
      : "every stream";
    if (failure.body && failure.body.argument === "stream") {
      box.setAttribute("aria-invalid", "true");
      error.textContent = `${sentence(failure.message)}. The sequence still shows ${still}.`;
    } else {
      error.textContent = `The sequence could not be updated (${failure.message}); it still shows ${still}.`;
    }
    error.hidden = false;
  }
}

function sentence(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

let filterTimer = null;
function refilter(delay = 150) {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(async () => {
    await redraw(() => diagram.setFilter(filterQuery()));
    updateStreamButton();
  }, delay);
}
for (const box of document.querySelectorAll(".filters input[type=checkbox]")) {
  box.addEventListener("change", () => refilter());
}
$("search").addEventListener("input", () => refilter());
$("stream-filter").addEventListener("input", () => refilter(400));

// "Show only this stream" beside the current step's stream (or back to all of them).
let shownStream = null;
function updateStreamButton() {
  const button = $("only-stream");
  button.hidden = shownStream === null;
  if (shownStream === null) return;
  const only = streamFilter() === String(shownStream);
  button.textContent = only ? "Show all streams" : `Show only stream ${shownStream}`;
  button.setAttribute("aria-pressed", String(only));
}
$("only-stream").addEventListener("click", () => {
  const only = streamFilter() === String(shownStream);
  $("stream-filter").value = only ? "" : String(shownStream);
  refilter(0);
});

$("first").addEventListener("click", () => go(0));
$("prev").addEventListener("click", () => go(current - 1));
$("next").addEventListener("click", () => go(current + 1));
$("last").addEventListener("click", () => go(count - 1));
$("play").addEventListener("click", togglePlay);
$("speed").addEventListener("change", () => {
  if (timer !== null) setPlaying(true);
});
$("jump-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const step = Number.parseInt($("jump").value, 10);
  if (Number.isFinite(step)) go(step, { push: true });
});
$("help-button").addEventListener("click", () => $("help").showModal());

// The page's keys work wherever the focus is, except on a control that uses that key
// itself: a text box or a select takes every key (it types, moves the caret or changes its
// value), the hex dump where it scrolls takes the arrows, Home and End, a checkbox takes
// Space, a radio group Space, the arrows, Home and End, and a button, link, summary or
// sequence row takes Space and Enter (it is pressed). So Space plays only with the focus
// on no control (the page, a heading, the step's notes).
const PRESSABLE_INPUTS = new Set(["button", "submit", "reset", "image"]);
const PRESSABLE = "button, a[href], summary, [role=button], [role=link], [role=checkbox], [role=radio], [role=tab], [role=option], [role=menuitem]";
const PRESS_KEYS = new Set([" ", "Enter"]);

const SCROLL_KEYS = new Set(["ArrowLeft", "ArrowRight", "Home", "End"]);

function controlOwnsKey(target, key) {
  if (!(target instanceof Element)) return false;
  // The hex dump, wider than its box on a narrow screen, scrolls with these keys.
  const dump = target.closest(".hex");
  if (dump && SCROLL_KEYS.has(key) && dump.scrollWidth > dump.clientWidth) return true;
  if (target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement) return true;
  if (target instanceof HTMLElement && target.isContentEditable) return true;
  if (target instanceof HTMLInputElement) {
    if (target.type === "checkbox" || PRESSABLE_INPUTS.has(target.type)) return PRESS_KEYS.has(key);
    if (target.type === "radio") return PRESS_KEYS.has(key) || key.startsWith("Arrow") || key === "Home" || key === "End";
    return true;
  }
  return PRESS_KEYS.has(key) && target.closest(PRESSABLE) !== null;
}

// The single-character shortcuts (Space, P, ?) can be turned off in the Keys dialog
// (WCAG 2.1.4), remembered in localStorage.
const SINGLE_KEYS = "h3learn.singleKeys";
const SINGLE_CHARACTER = new Set([" ", "?", "p", "P"]);
let singleKeys = true;
try {
  singleKeys = localStorage.getItem(SINGLE_KEYS) !== "0";
} catch {
  singleKeys = true; // storage may be disabled: the shortcuts stay on
}
$("single-keys").checked = singleKeys;
$("single-keys").addEventListener("change", () => {
  singleKeys = $("single-keys").checked;
  try {
    localStorage.setItem(SINGLE_KEYS, singleKeys ? "1" : "0");
  } catch {
    // the choice still applies to this page
  }
});

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  if (controlOwnsKey(event.target, event.key)) return;
  if ($("help").open) return;
  if (!singleKeys && SINGLE_CHARACTER.has(event.key)) return;
  const keys = {
    ArrowRight: () => go(current + 1),
    ArrowLeft: () => go(current - 1),
    Home: () => go(0),
    End: () => go(count - 1),
    " ": togglePlay,
    "?": () => $("help").showModal(),
    p: toggleProjector,
    P: toggleProjector,
  };
  const action = keys[event.key];
  if (!action) return;
  event.preventDefault();
  if (event.key !== " ") setPlaying(false);
  action();
});

root.addEventListener("h3learn:go", (event) => go(event.detail.step, { push: true }));

window.addEventListener("popstate", (event) => {
  if (event.state && Number.isInteger(event.state.step)) go(event.state.step);
});

// -- the hook other modules use (static/js/classroom.js) ---------------------------------

const stepListeners = [];
// A step of a live capture that this page does not have yet (a teacher a batch ahead):
// shown as soon as the capture has grown that far.
let pendingShow = null;
export const stepper = {
  traceId,
  base, // where this page's steps live: /trace/<id> or /lesson/<id>
  get count() { return count; }, // a live capture's grows
  get current() { return current; },
  // Show a step for someone else (a teacher being followed): play stops, listeners hear "room".
  show(step) {
    setPlaying(false);
    pendingShow = root.dataset.capture && step >= count ? step : null;
    if (pendingShow !== null) return Promise.resolve();
    return go(step, { by: "room" });
  },
  onStep(listener) { stepListeners.push(listener); },
};

// The diagram's rows and the step itself are fetched at the same time.
diagram.setFilter("");
go(current, { by: "load" });
connectLive($("live-status"));
if (root.dataset.capture) {
  followCapture({
    traceId,
    count: () => count,
    before: document.querySelector(".controls"),
    onGrow: (total, rows, follow) => {
      count = total;
      $("step-count").textContent = `of ${count}`;
      $("jump").max = String(count - 1);
      diagram.grow(count, rows);
      updateButtons();
      if (pendingShow !== null && pendingShow < count) {
        const step = pendingShow;
        pendingShow = null;
        go(step, { by: "room" });
      } else if (follow) go(count - 1);
    },
  });
}
