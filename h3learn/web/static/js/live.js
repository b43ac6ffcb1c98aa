// The Socket.IO connection (live capture and classrooms will send events through it).
// The client library is the npm package socket.io-client, served by /vendor/socket.io.min.js;
// if `npm ci` was not run that route answers 503 and the page says live updates are off.
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
