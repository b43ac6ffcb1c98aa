// Classroom mode on the step page (protocol: docs/web-api.md, "Classroom").
//
// Teacher: "Present" creates a room (POST /api/rooms); the answer's token is kept in this
// tab's sessionStorage, never in the address, which only carries ?room=<code> (the code is
// public: it is on the projector). Every step this page shows is sent to the room.
// Student: the page was opened with ?room=<code> and no token: it joins the room, shows
// the teacher's step, and follows until the student steps on their own ("explore");
// "Follow the teacher" goes back. A reconnect joins again and lands on the current step.
// Hooks for lessons (wired when checkpoints exist): `askQuestion`, `revealQuestion`,
// `switchTrace` below.
import { clear, h } from "./dom.js";
import { stepper } from "./step.js";

const NAMESPACE = "/classroom";
const TEACHING_KEY = "h3learn.classroom.teaching"; // {code, token, display} of this tab's room
// A teacher's steps go out at most this often while keys are held or the trace plays;
// the step finally shown always goes out.
const SEND_MS = 100;

const $ = (id) => document.getElementById(id);
const bar = $("classroom-bar");
const statusLine = $("classroom-status");
const params = new URLSearchParams(location.search);
const roomCode = params.get("room");
let presentNow = params.get("present") === "1"; // set once, by "Present"

let socket = null;
let role = null; // "teacher" or "student" once joined
let room = null; // the join answer: code, display, trace, step, students, question
let teaching = readTeaching();
let following = true;
let teacherAt = null; // {trace, step} the teacher shows
let lastMove = -Infinity;
let myMove = 0;
let chosen = null; // this student's answer to the open question: {id, option}
let over = false; // the class has ended

function readTeaching() {
  try {
    return JSON.parse(sessionStorage.getItem(TEACHING_KEY) || "null");
  } catch {
    return null;
  }
}

function storeTeaching(value) {
  teaching = value;
  try {
    if (value) sessionStorage.setItem(TEACHING_KEY, JSON.stringify(value));
    else sessionStorage.removeItem(TEACHING_KEY);
  } catch {
    // storage disabled: this page still teaches until it is closed
  }
}

function say(text, state = "") {
  bar.hidden = false;
  statusLine.textContent = text;
  bar.dataset.state = state;
}

function show(id, on) {
  $(id).hidden = !on;
}

function stepAddress(trace, step) {
  return `/trace/${encodeURIComponent(trace)}/step/${step}?room=${encodeURIComponent(roomCode)}`;
}

// -- the connection ----------------------------------------------------------------------

function connect() {
  if (typeof window.io !== "function") {
    say("Classroom unavailable: the Socket.IO client is not installed (run scripts/setup).", "error");
    return;
  }
  socket = window.io(NAMESPACE, { transports: ["websocket", "polling"] });
  window.h3learnClassroom = socket;
  socket.on("connect", join);
  socket.on("disconnect", () => {
    if (!over) say("Connection lost: reconnecting…", "error");
  });
  socket.on("step", (message) => teacherMoved(message.trace, message.step, message.move));
  socket.on("students", (message) => showStudents(message.count));
  socket.on("question", (question) => showQuestion(question, null));
  socket.on("tally", (tally) => showTally(tally));
  socket.on("revealed", (message) => showQuestion(message.question, message));
  socket.on("ended", (message) => ended(message.reason));
}

function join() {
  const token = teaching && teaching.code === roomCode ? teaching.token : undefined;
  socket.emit("join", { code: roomCode, token }, (answer) => {
    if (answer.error) {
      if (token && answer.status !== 503) storeTeaching(null); // the room or token is no more
      say(`Could not join the class: ${answer.error}`, "error");
      return;
    }
    room = answer;
    role = answer.role;
    $("join-code").textContent = answer.display;
    if (role === "teacher") {
      showStudents(answer.students);
      sendStep(stepper.current, { now: true }); // this page is where the teacher is
      if (presentNow) showJoinDialog();
      presentNow = false;
    } else {
      teacherMoved(answer.trace, answer.step, answer.move, { rejoined: true });
      if (chosen && answer.question && chosen.id === answer.question.id && !answer.question.revealed) {
        sendAnswer(chosen.option); // a reconnect: the answer is counted again
      }
    }
    // The spread of answers: the teacher's always, everyone's once it is revealed.
    if (answer.question) showQuestion(answer.question, answer.tally || null);
    updateBar();
  });
}

// -- the teacher ---------------------------------------------------------------------------

let sendTimer = null;
let sentAt = -Infinity;

function sendStep(step, { now = false } = {}) {
  if (role !== "teacher") return;
  clearTimeout(sendTimer);
  const wait = SEND_MS - (performance.now() - sentAt);
  if (!now && wait > 0) {
    sendTimer = setTimeout(() => sendStep(stepper.current, { now: true }), wait);
    return;
  }
  sentAt = performance.now();
  myMove = Math.max(myMove + 1, Date.now() * 1000);
  const message = { code: room.code, token: teaching.token, trace: stepper.traceId, step, move: myMove };
  socket.emit("step", message, (answer) => {
    if (answer.error) say(`The class did not follow: ${answer.error}`, "error");
  });
}

async function present() {
  if (teaching && !roomCode) {
    // This tab already teaches a room: show this trace there (a switch of trace).
    location.assign(`/trace/${encodeURIComponent(stepper.traceId)}/step/${stepper.current}?room=${encodeURIComponent(teaching.code)}`);
    return;
  }
  let answer;
  try {
    const response = await fetch("/api/rooms", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ trace: stepper.traceId, step: stepper.current }),
    });
    answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `${response.status}`);
  } catch (failure) {
    say(`Could not start a class: ${failure.message}`, "error");
    return;
  }
  storeTeaching({ code: answer.code, token: answer.token, display: answer.display });
  // The address now names the room, so a reload keeps presenting.
  location.assign(answer.teacher_url + "&present=1");
}

function showJoinDialog() {
  const dialog = $("classroom-join");
  const qr = h("img", { id: "join-qr", class: "join-qr", alt: "QR code of the join link" });
  qr.src = `/room/${encodeURIComponent(room.code)}/qr.svg`;
  clear($("join-qr-box")).append(qr);
  const link = room.join_url;
  $("join-link").textContent = link.replace(/^https?:\/\//, "");
  $("join-link").href = link;
  const loopback = /^(localhost|127\.|\[::1\])/.test(new URL(link).host);
  $("join-warning").hidden = !loopback;
  $("join-warning").textContent = loopback
    ? "This link names this computer itself (localhost): students cannot reach it. Start h3learn serve with --host 0.0.0.0 and open this page by the machine's network address, or give --public-url."
    : "";
  if (!dialog.open) dialog.showModal();
}

function showStudents(count) {
  if (room) room.students = count;
  $("join-count").textContent = `${count} ${count === 1 ? "student" : "students"} connected`;
  updateBar();
}

function endClass() {
  if (!confirm("End the class for everyone?")) return;
  socket.emit("end", { code: room.code, token: teaching.token }, (answer) => {
    if (answer.error) say(`Could not end the class: ${answer.error}`, "error");
  });
}

// Hooks for the lesson pages (predict checkpoints, what-if reruns).

// Put a question to the class: {id, prompt, options: [text, ...]}; answers come as "tally".
export function askQuestion(question) {
  return new Promise((resolve) => {
    socket.emit("ask", { code: room.code, token: teaching.token, question }, resolve);
  });
}

// Show everyone the spread of answers (and the right option, if `correct` is given).
export function revealQuestion(id, correct = null) {
  return new Promise((resolve) => {
    socket.emit("reveal", { code: room.code, token: teaching.token, question: id, correct }, resolve);
  });
}

// The teacher moves the class to another trace (a what-if rerun gives a new trace id):
// this page opens it in the room, and the students follow when it is shown.
export function switchTrace(traceId, step = 0) {
  location.assign(`/trace/${encodeURIComponent(traceId)}/step/${step}?room=${encodeURIComponent(room.code)}`);
}

// -- the student ---------------------------------------------------------------------------

function teacherMoved(trace, step, move, { rejoined = false } = {}) {
  if (move < lastMove || (move === lastMove && !rejoined)) return;
  lastMove = move;
  teacherAt = { trace, step };
  if (role === "teacher") {
    if (trace !== stepper.traceId) location.assign(stepAddress(trace, step));
    else if (step !== stepper.current) stepper.show(step); // the teacher's other page moved
    return;
  }
  if (following) goToTeacher();
  updateBar();
}

function goToTeacher() {
  if (!teacherAt) return;
  if (teacherAt.trace !== stepper.traceId) {
    location.assign(stepAddress(teacherAt.trace, teacherAt.step));
    return;
  }
  if (teacherAt.step !== stepper.current) stepper.show(teacherAt.step);
}

function setFollowing(on) {
  following = on;
  if (on) goToTeacher();
  updateBar();
}

function sendAnswer(option) {
  const question = room.question;
  socket.emit("answer", { code: room.code, question: question.id, option }, (answer) => {
    if (answer.error) {
      $("question-note").textContent = answer.error;
      return;
    }
    chosen = { id: question.id, option };
    for (const button of $("question-options").querySelectorAll("button")) {
      button.setAttribute("aria-pressed", String(Number(button.dataset.option) === option));
    }
    $("question-note").textContent = "Your answer is in (anonymous). You may change it until the teacher reveals.";
  });
}

// -- questions (both roles) ------------------------------------------------------------------

function showQuestion(question, result) {
  if (!question || !room) return;
  room.question = question;
  $("classroom-question").hidden = false;
  $("question-prompt").textContent = question.prompt;
  const counts = result ? result.counts : null;
  const total = result ? Math.max(1, result.answered) : 1;
  const canAnswer = role === "student" && !question.revealed;
  const rows = question.options.map((text, index) => {
    const mine = chosen && chosen.id === question.id && chosen.option === index;
    const label = [text];
    if (counts) {
      const n = counts[index];
      const share = Math.round((100 * n) / total);
      label.push(h("span", { class: "count" }, ` · ${n} ${n === 1 ? "answer" : "answers"} (${share}%)`));
    }
    if (question.revealed && question.correct === index) label.push(h("strong", { class: "correct" }, " ✓ correct"));
    const item = canAnswer
      ? h("button", { type: "button", data: { option: String(index) }, "aria-pressed": String(Boolean(mine)) }, ...label)
      : h("p", { class: "option", data: { option: String(index) } }, ...label);
    if (canAnswer) item.addEventListener("click", () => sendAnswer(index));
    if (counts) {
      const spread = h("span", { class: "spread" });
      spread.style.width = `${(100 * counts[index]) / total}%`;
      item.append(spread);
    }
    return item;
  });
  clear($("question-options")).append(...rows);
  $("question-note").textContent = question.revealed
    ? `Revealed: ${result ? result.answered : 0} answered.`
    : role === "teacher" ? "Waiting for answers…" : "Choose an answer.";
}

function showTally(tally) {
  if (role !== "teacher" || !room || !room.question || room.question.id !== tally.id) return;
  if (room.question.revealed) return;
  showQuestion(room.question, tally);
  $("question-note").textContent = `${tally.answered} of ${room.students} answered.`;
}

// -- the bar ------------------------------------------------------------------------------------

function updateBar() {
  if (!room) return;
  const code = room.display;
  if (role === "teacher") {
    const count = room.students;
    say(`Presenting · room ${code} · ${count} ${count === 1 ? "student" : "students"}`, "teacher");
  } else if (following) {
    say(`Following the teacher · room ${code}`, "following");
  } else {
    const where = teacherAt ? ` (the teacher is at step ${teacherAt.step}${teacherAt.trace !== stepper.traceId ? " of another trace" : ""})` : "";
    say(`Exploring on your own · room ${code}${where}`, "exploring");
  }
  show("classroom-show-code", role === "teacher");
  show("classroom-end", role === "teacher");
  show("classroom-follow", role === "student" && !following);
  show("classroom-explore", role === "student" && following);
}

function ended(reason) {
  over = true;
  if (role === "teacher") storeTeaching(null);
  role = null;
  for (const id of ["classroom-follow", "classroom-explore", "classroom-show-code", "classroom-end"]) show(id, false);
  say(`The class has ended: ${reason}.`, "ended");
  history.replaceState(history.state, "", location.pathname); // a reload is no longer in the room
  if (socket) socket.disconnect();
  const dialog = $("classroom-join");
  if (dialog.open) dialog.close();
}

// -- wiring ---------------------------------------------------------------------------------------

stepper.onStep((step, by) => {
  if (role === "teacher" && by !== "room") sendStep(step);
  else if (role === "student" && by === "user" && following) setFollowing(false);
});
$("classroom-follow").addEventListener("click", () => setFollowing(true));
$("classroom-explore").addEventListener("click", () => setFollowing(false));
$("classroom-show-code").addEventListener("click", showJoinDialog);
$("classroom-end").addEventListener("click", endClass);

const presentButton = $("present-button");
if (roomCode) {
  presentButton.hidden = true;
  say("Joining the class…");
  connect();
  if (presentNow) {
    history.replaceState(history.state, "", location.pathname + `?room=${encodeURIComponent(roomCode)}`);
  }
} else {
  if (teaching) {
    presentButton.textContent = `Show in room ${teaching.display}`;
    presentButton.title = "Move your class to this trace, at this step";
  }
  presentButton.addEventListener("click", present);
}
