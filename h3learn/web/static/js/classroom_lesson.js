// A lesson presented to a class (loaded on a lesson's step page, after lesson.js).
//
// Teacher: a checkpoint stops the teacher until it has been put to this class (not the
// teacher's own progress): the question box gets "Ask the class". The server reads the
// question from the lesson (askCheckpoint); the answers arrive in the classroom's question
// box, and its "Reveal the answers" shows everyone the spread, the answer and its
// explanation (from the server), after which the class moves on to the step the checkpoint
// stopped before. "What if? Rerun for the class" records the lesson with other settings
// and moves everyone to the new trace, at the same step (or step 0 if it has fewer).
// Student: a revealed checkpoint goes into the student's own progress (right or shown,
// as the server judged the student's answer), with its explanation beside the step.
// Everyone: while the class is asked a checkpoint, its step and the later ones stay hidden
// (lesson.js), even on the screen of a student who answered it before.
import { h } from "./dom.js";
import { askCheckpoint, classroom, classroomEvents, switchTrace } from "./classroom.js";
import { lessonPage } from "./lesson.js";
import { stepper } from "./step.js";

const root = document.getElementById("stepper");
const $ = (id) => document.getElementById(id);

let asked = new Set(); // the checkpoints this class has been shown (teacher)
let askedKey = null;
let onScreen = null; // the checkpoint on screen: {stop, checkpoint, box}

const teaching = () => classroom.role === "teacher";

function markAsked(id) {
  asked.add(id);
  try {
    sessionStorage.setItem(askedKey, JSON.stringify([...asked]));
  } catch {
    // storage disabled: this page remembers until it is closed
  }
}

function loadAsked(code) {
  askedKey = `h3learn.classroom.asked.${code}`;
  try {
    const saved = JSON.parse(sessionStorage.getItem(askedKey) || "[]");
    return new Set(Array.isArray(saved) ? saved : []);
  } catch {
    return new Set();
  }
}

function go(step) {
  root.dispatchEvent(new CustomEvent("h3learn:go", { detail: { step } }));
}

// -- checkpoints -----------------------------------------------------------------------

function offerToClass({ stop, box }) {
  if (!box.isConnected || box.hidden || box.querySelector("#checkpoint-ask-class")) return;
  const button = h("button", { type: "button", id: "checkpoint-ask-class" }, "Ask the class");
  const note = h("span", { id: "checkpoint-class-note", class: "muted", role: "status" },
    " Students answer on their own screens; the spread appears in the question box, where you reveal it.");
  button.addEventListener("click", async () => {
    button.disabled = true;
    const answer = await askCheckpoint(stop.id);
    if (answer.error) {
      note.textContent = ` ${answer.error}`;
      button.disabled = false;
      return;
    }
    note.textContent = " Asked: the answers arrive in the question box.";
    $("classroom-question").scrollIntoView({ block: "nearest" });
  });
  box.append(h("p", { class: "checkpoint-class" }, button, note));
}

root.addEventListener("h3learn:checkpoint", (event) => {
  onScreen = event.detail;
  if (teaching()) offerToClass(onScreen);
});

// The teacher checked or showed the answer on this page alone: the class moves on too.
root.addEventListener("h3learn:solved", (event) => {
  if (teaching()) markAsked(event.detail.stop.id);
});

// The checkpoint of this lesson the class is being asked, if any: what a question says.
function classQuestion(question) {
  const open = question && question.lesson === lessonPage.lessonId && !question.revealed;
  lessonPage.setClassQuestion(open ? question.id : null);
}

classroomEvents.addEventListener("question", (event) => classQuestion(event.detail));

classroomEvents.addEventListener("revealed", (event) => {
  const { question, mine } = event.detail;
  if (question.lesson !== lessonPage.lessonId || question.answer === null) return;
  // Right or not as the server judged this student's answer (the reveal says which).
  const right = mine !== null
    && (question.kind === "choice" ? Number(mine.key) === question.correct : question.right.includes(mine.key));
  const result = { correct: right, answer: question.answer, explain_html: question.explain_html };
  if (!teaching()) {
    lessonPage.solvedInClass(question.id, result, right ? "right" : "shown");
    return;
  }
  markAsked(question.id);
  lessonPage.solvedInClass(question.id, { ...result, correct: false }, null);
  if (stepper.current < question.step) go(question.step); // everyone moves past the checkpoint
});

// -- what if? ----------------------------------------------------------------------------

async function whatIf(form, status) {
  const overrides = {};
  for (const select of form.querySelectorAll("select")) {
    if (!select.value) continue;
    const [side, key] = select.name.split(".");
    (overrides[side] ||= {})[key] = JSON.parse(select.value);
  }
  if (!Object.keys(overrides).length) {
    status.textContent = "Choose at least one setting to change.";
    return;
  }
  status.textContent = "Recording…";
  let answer;
  try {
    const response = await fetch(`/api/lessons/${encodeURIComponent(lessonPage.lessonId)}/what-if`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify({ overrides }),
    });
    answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `${response.status}`);
  } catch (failure) {
    status.textContent = `Could not record the rerun: ${failure.message}`;
    return;
  }
  status.textContent = "Moving the class to the rerun…";
  const step = stepper.current < answer.count ? stepper.current : 0;
  const moved = await switchTrace(answer.trace, step);
  if (moved.error) status.textContent = moved.error;
}

async function addWhatIfForm() {
  if ($("class-what-if")) return;
  const lesson = await lessonPage.ready;
  const { choices, lesson: own } = lesson.what_if;
  const status = h("p", { id: "class-what-if-status", class: "muted", role: "status" });
  const form = h("form", { id: "class-what-if-form", class: "what-if-form class-what-if-form" });
  for (const side of ["client", "server"]) {
    const fields = h("fieldset", {}, h("legend", {}, side === "client" ? "Client" : "Server"));
    for (const [key, values] of Object.entries(choices)) {
      const id = `class-wi-${side}-${key}`;
      fields.append(h("label", { for: id }, key), h("select", { id, name: `${side}.${key}` },
        h("option", { value: "" }, `as in the lesson (${JSON.stringify(own[side][key])})`),
        ...values.map((value) => h("option", { value: JSON.stringify(value) }, JSON.stringify(value)))));
    }
    form.append(fields);
  }
  form.append(h("button", { type: "submit", id: "class-what-if-run" }, "Record and show to the class"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    whatIf(form, status);
  });
  $("lesson-panel").append(h("details", { class: "class-what-if", id: "class-what-if" },
    h("summary", {}, "What if? Rerun for the class"),
    h("p", { class: "muted" }, "Records this lesson again with other settings and moves everyone to it, at this step."),
    form, status));
}

// -- joining -------------------------------------------------------------------------------

classroomEvents.addEventListener("joined", (event) => {
  const { role, room } = event.detail;
  classQuestion(room.question);
  if (role !== "teacher") return;
  asked = loadAsked(room.code);
  lessonPage.setAnsweredRule((stop) => asked.has(stop.id));
  if (onScreen) offerToClass(onScreen);
  addWhatIfForm().catch((failure) => {
    $("lesson-panel").append(h("p", { class: "error" }, `What if? is unavailable: ${failure.message}`));
  });
});
