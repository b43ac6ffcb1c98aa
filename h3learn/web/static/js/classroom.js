// Classroom mode on the step page (protocol: docs/web-api.md, "Classroom").
//
// Teacher: "Present" creates a room (POST /api/rooms); the answer's token is kept in this
// tab's sessionStorage, never in the address, which only carries ?room=<code> (the code is
// public: it is on the projector). Every step this page shows is sent to the room.
// Student: the page was opened with ?room=<code> and no token: it joins the room, shows
// the teacher's step, and follows until the student steps on their own ("explore");
// "Follow the teacher" goes back. A reconnect joins again and lands on the current step.
// A room shows a lesson (on the lesson's own page), a trace or a live capture: the server
// says which page shows the teacher's step (`page`), and a page showing another trace
// opens that one. The question box is classroom_question.js; a lesson's page adds its
// checkpoints and what-if reruns (classroom_lesson.js) through the exports below.
import { clear, h, keepFocus } from "./dom.js";
import { questionBox } from "./classroom_question.js";
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
let over = false; // the class has ended
// Who else wants to know: "joined" ({role, room}), "question" (the question opened),
// "revealed" ({question, counts|top, answered, mine}) (classroom_lesson.js listens).
export const classroomEvents = new EventTarget();

function tell(name, detail) {
  classroomEvents.dispatchEvent(new CustomEvent(name, { detail }));
}

function emit(event, payload) {
  return new Promise((resolve) => socket.emit(event, payload, resolve));
}

const questions = questionBox({
  emit,
  code: () => room.code,
  token: () => teaching.token,
  role: () => role,
  students: () => (room ? room.students : 0),
});

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

// The page that shows a room's step (the server's `page`), in the room.
function inRoom(page, code = roomCode) {
  return `${page}?room=${encodeURIComponent(code)}`;
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
  socket.on("step", (message) => teacherMoved(message));
  socket.on("students", (message) => showStudents(message.count));
  socket.on("question", (question) => {
    questions.show(question);
    tell("question", question);
  });
  socket.on("tally", (tally) => questions.tally(tally));
  socket.on("revealed", (message) => {
    questions.revealed(message);
    tell("revealed", { ...message, mine: questions.mine });
  });
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
      teacherMoved(answer, { rejoined: true });
    }
    // The spread of answers: the teacher's always, everyone's once it is revealed.
    if (answer.question) {
      questions.show(answer.question, answer.tally || null);
      if (role === "student") questions.resend(); // a reconnect: the answer counts again
    }
    updateBar();
    updateWhatIfLink();
    tell("joined", { role, room });
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
    location.assign(inRoom(`${stepper.base}/step/${stepper.current}`, teaching.code));
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
  questions.refresh();
}

function endClass() {
  if (!confirm("End the class for everyone?")) return;
  socket.emit("end", { code: room.code, token: teaching.token }, (answer) => {
    if (answer.error) say(`Could not end the class: ${answer.error}`, "error");
  });
}

// Hooks for the lesson pages (predict checkpoints, what-if reruns): classroom_lesson.js.

export const classroom = {
  get role() { return role; },
  get room() { return room; },
};

// Put a question of your own to the class: {id, prompt, options: [text, ...]}, or
// {id, prompt, kind: "number" | "text"} for a typed answer; answers come as "tally".
export function askQuestion(question) {
  return emit("ask", { code: room.code, token: teaching.token, question });
}

// Ask the class a checkpoint of the lesson the room is on: the server reads the question
// from the lesson, and at the reveal its answer and explanation.
export function askCheckpoint(id) {
  return emit("ask", { code: room.code, token: teaching.token, checkpoint: id });
}

// Show everyone the spread of answers (and the right option of a question of your own, if
// `correct` is given; a checkpoint's answer comes from the server).
export function revealQuestion(id, correct = null) {
  return emit("reveal", { code: room.code, token: teaching.token, question: id, correct });
}

// The teacher moves the class to another trace (a what-if rerun gives a new trace id):
// the room is told first, so the students go at once, then this page opens it, in the
// room (on a lesson's own page if it is a lesson: the server says which page).
export async function switchTrace(traceId, step = 0) {
  clearTimeout(sendTimer);
  myMove = Math.max(myMove + 1, Date.now() * 1000);
  const answer = await emit("step", { code: room.code, token: teaching.token, trace: traceId, step, move: myMove });
  if (answer.error) {
    say(`The class did not follow: ${answer.error}`, "error");
    return answer;
  }
  location.assign(inRoom(answer.page, room.code));
  return answer;
}

// -- the student ---------------------------------------------------------------------------

// The teacher's position: {trace, step, move, page} (a "step" message or a join answer).
function teacherMoved(at, { rejoined = false } = {}) {
  if (at.move < lastMove || (at.move === lastMove && !rejoined)) return;
  lastMove = at.move;
  teacherAt = at;
  if (role === "teacher") {
    if (at.trace !== stepper.traceId) location.assign(inRoom(at.page));
    else if (at.step !== stepper.current) stepper.show(at.step); // the teacher's other page moved
    return;
  }
  if (following) goToTeacher();
  updateBar();
}

function goToTeacher() {
  if (!teacherAt) return;
  if (teacherAt.trace !== stepper.traceId) {
    location.assign(inRoom(teacherAt.page));
    return;
  }
  if (teacherAt.step !== stepper.current) stepper.show(teacherAt.step);
}

// The button pressed goes and the other comes: the focus moves to it.
function setFollowing(on) {
  keepFocus(() => {
    following = on;
    if (on) goToTeacher();
    updateBar();
  }, on ? "classroom-explore" : "classroom-follow");
}

// A what-if trace's banner (lessons/what_if_note.html) links back to its lesson at this
// step (or step 0 if the lesson is shorter); for the teacher the link moves the class.
function updateWhatIfLink() {
  const back = $("what-if-back");
  if (!back) return;
  const step = stepper.current < Number(back.dataset.count) ? stepper.current : 0;
  back.dataset.step = String(step);
  back.href = `/lesson/${encodeURIComponent(back.dataset.lesson)}/step/${step}`;
  back.hidden = role === "student";
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
  keepFocus(() => endedHere(reason), "classroom-status", "step-heading");
}

function endedHere(reason) {
  over = true;
  const teacher = role === "teacher";
  if (teacher) storeTeaching(null);
  role = null;
  for (const id of ["classroom-follow", "classroom-explore", "classroom-show-code", "classroom-end"]) show(id, false);
  questions.end();
  if (teacher) {
    say(`The class has ended (${reason}). Present starts a new one.`, "ended");
    offerPresent();
  } else {
    say(`The class has ended: ${reason}.`, "ended");
  }
  history.replaceState(history.state, "", location.pathname); // a reload is no longer in the room
  if (socket) socket.disconnect();
  const dialog = $("classroom-join");
  if (dialog.open) dialog.close();
}

// -- wiring ---------------------------------------------------------------------------------------

stepper.onStep((step, by) => {
  if (role === "teacher" && by !== "room") sendStep(step);
  else if (role === "student" && by === "user" && following) setFollowing(false);
  updateWhatIfLink();
});
const whatIfBack = $("what-if-back");
if (whatIfBack) {
  whatIfBack.addEventListener("click", (event) => {
    if (role !== "teacher") return;
    event.preventDefault();
    switchTrace(whatIfBack.dataset.lesson, Number(whatIfBack.dataset.step));
  });
  updateWhatIfLink();
}
$("classroom-follow").addEventListener("click", () => setFollowing(true));
$("classroom-explore").addEventListener("click", () => setFollowing(false));
$("classroom-show-code").addEventListener("click", showJoinDialog);
$("classroom-end").addEventListener("click", endClass);

const presentButton = $("present-button");
const presentTitle = presentButton.title;

// Present: start a class here, or move the class this tab teaches to this page.
function offerPresent() {
  presentButton.hidden = false;
  presentButton.textContent = teaching ? `Show in room ${teaching.display}` : "Present";
  presentButton.title = teaching ? "Move your class to this trace, at this step" : presentTitle;
}

presentButton.addEventListener("click", present);
if (roomCode) {
  presentButton.hidden = true;
  say("Joining the class…");
  connect();
  if (presentNow) {
    history.replaceState(history.state, "", location.pathname + `?room=${encodeURIComponent(roomCode)}`);
  }
} else {
  offerPresent();
}
