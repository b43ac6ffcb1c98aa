// A capture on the step page: while its connection runs, new steps arrive over Socket.IO
// (namespace /live, room "capture:<id>", at most ten batches a second) and the page grows:
// the step count, the sequence diagram (rows come with the batch, or are fetched when they
// scroll into view) and, with "follow" on, the current step moves to the newest one.
import { h } from "./dom.js";
import { connectCaptures } from "./live.js";

// onGrow(count, rows, follow) is called with the new number of steps and the new diagram rows
// (possibly empty: a large batch sends only the count) and whether to follow: show the
// newest step.
export function followCapture({ traceId, count, before, onGrow }) {
  const status = h("span", { class: "live-capture-status", role: "status" }, "live capture: connecting…");
  const followBox = h("input", { type: "checkbox", id: "follow-capture" });
  const banner = h("div", { class: "capture-banner", id: "capture-banner", data: { state: "connecting" } },
    h("strong", { id: "capture-state" }, "Live capture"),
    h("span", { id: "capture-steps" }, `${count()} steps so far`),
    h("label", {}, followBox, " follow the newest step"),
    status);
  before.before(banner);
  let total = count();
  // Ticking the box goes to the newest step at once; from then on every batch moves there.
  followBox.addEventListener("change", () => {
    if (followBox.checked) onGrow(total, [], true);
  });
  const show = (state) => {
    banner.dataset.state = state;
    document.getElementById("capture-state").textContent =
      state === "live" ? "● Live capture: the connection is open" : "Capture: the connection has ended";
    document.getElementById("capture-steps").textContent = `${total} steps${state === "live" ? " so far" : ""}`;
    followBox.disabled = state !== "live";
  };
  const grow = (batch) => {
    if (batch.count > total) {
      total = batch.count;
      onGrow(batch.count, batch.rows, followBox.checked);
    }
    show(batch.state);
  };
  connectCaptures(status, (socket) => {
    socket.emit("watch", { capture: traceId }, (answer) => {
      if (!answer || answer.error) {
        status.textContent = `live capture: ${answer ? answer.error : "no answer"}`;
        return;
      }
      grow({ count: answer.count, rows: [], state: answer.state });
    });
    if (!socket.h3learnListening) {
      socket.h3learnListening = true;
      socket.on("events", (batch) => {
        if (batch.capture === traceId) grow(batch);
      });
    }
  });
}
