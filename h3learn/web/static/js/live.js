// The Socket.IO connection (live capture and classrooms send events through it).
// The client library is the npm package socket.io-client, served by /vendor/socket.io.min.js;
// if `npm ci` was not run that route answers 503 and the page says live updates are off.

// Call `ready(io)` once the Socket.IO client has loaded, or `missing()` if it cannot.
export function whenSocketIo(ready, missing) {
  const script = document.getElementById("socketio-script");
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    if (typeof window.io === "function") ready(window.io);
    else missing();
  };
  if (typeof window.io === "function") start();
  else {
    script.addEventListener("load", start);
    script.addEventListener("error", start);
    if (document.readyState === "complete") start();
    else window.addEventListener("load", start, { once: true });
  }
}

// A socket on the live-capture namespace (docs/web-api.md, "Socket.IO"), with `status`
// (an element) saying whether live updates are on. `onConnect(socket)` runs after every
// (re)connection, where a page asks again for what it watches.
export function connectCaptures(status, onConnect) {
  whenSocketIo((io) => {
    const socket = io("/live", { transports: ["websocket", "polling"] });
    socket.on("connect", () => {
      status.textContent = "live: connected";
      status.dataset.state = "connected";
      onConnect(socket);
    });
    socket.on("disconnect", () => {
      status.textContent = "live: disconnected";
      status.dataset.state = "disconnected";
    });
    window.h3learnCaptureSocket = socket;
  }, () => {
    status.textContent = "live: unavailable (socket.io-client is not installed)";
    status.dataset.state = "unavailable";
  });
}

export function connectLive(status) {
  const script = document.getElementById("socketio-script");
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    if (typeof window.io !== "function") {
      status.textContent = "live: unavailable (socket.io-client is not installed)";
      status.dataset.state = "unavailable";
      return;
    }
    const socket = window.io({ transports: ["websocket", "polling"] });
    window.h3learnSocket = socket;
    socket.on("connect", () => {
      status.textContent = "live: connected";
      status.dataset.state = "connected";
    });
    socket.on("disconnect", () => {
      status.textContent = "live: disconnected";
      status.dataset.state = "disconnected";
    });
  };
  if (typeof window.io === "function") start();
  else {
    script.addEventListener("load", start);
    script.addEventListener("error", start);
    // The classic deferred script may already have failed before this module ran.
    if (document.readyState === "complete") start();
    else window.addEventListener("load", () => { if (!window.h3learnSocket) start(); }, { once: true });
  }
}
