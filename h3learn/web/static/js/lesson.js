// A lesson's step page: the lesson's notes beside each step, and its predict checkpoints.
// Loaded before step.js, it listens to the stepper's events (step.js):
//   h3learn:beforestep  cancelled when the step lies past a question not yet answered;
//                       the page then shows the step just before it, and the question
//   h3learn:step        a step was drawn: show its notes, remember it (progress.js)
// and tells it which steps to hold back: the steps from the next question not yet answered
// on (root.dataset.hiddenFrom, "h3learn:hidden"). The page fetches nothing of them, not
// their diagram rows, search results, notes or the steps themselves, until the question is
// answered (or its answer shown). This keeps the answer off the screen; it is no lock: the
// API serves every step to whoever asks (docs/lessons.md).
// Answers are checked by the server (POST /api/lessons/<id>/checkpoints/<cid>); this page
// only knows where each checkpoint stops the learner, never its answer.
// In a class (classroom_lesson.js) the page says "h3learn:checkpoint" when it shows a
// question and "h3learn:solved" when one is answered here, and `lessonPage` lets the class
// decide which checkpoints still stop a teacher and record what the class was shown.
import { clear, getJSON, h, keepFocus } from "./dom.js";
import { markdownBlock } from "./markdown.js";
import { link } from "./bytes.js";
import { loadProgress, saveProgress } from "./progress.js";

const root = document.getElementById("stepper");
const lessonId = root.dataset.lesson;
const stops = JSON.parse(root.dataset.checkpoints).sort((a, b) => a.step - b.step);
const $ = (id) => document.getElementById(id);
const progress = loadProgress(lessonId);
// A page opened in a class (?room=) is put where the class is, past any checkpoint.
const inRoom = new URLSearchParams(location.search).has("room");
let isAnswered = (stop) => Boolean(progress.answered[stop.id]);
let classAsks = null; // the checkpoint a class is being asked (classroom_lesson.js)

let lesson = null; // GET /api/lessons/<id>, once it has arrived
let asking = null; // the checkpoint on screen
// The checkpoint whose result (and its "Reveal step N →" button) the checkpoint box shows:
// it belongs to the step just before the question and goes once the learner leaves it.
let resultOf = null;
let shownStep = null;
let solved = null; // {stop, answer} just answered: its explanation stays until the learner moves on
// A step asked for past unanswered questions (a deep link, the RFC reader, a jump): the
// learner is stopped at the first question and told how many stand before that step; once
// it is answered (or revealed), the result's button goes on towards that step, stopping
// at the next question before it, until the step is reached.
let detour = null;

// -- the steps held back ---------------------------------------------------------------------

// The first question past the step on screen that is not answered yet (or that the class
// is being asked now): its step and every later one are held back. Before the first step
// is drawn, "on screen" is the step a class puts this page at, or none.
function holdingStop() {
  const after = shownStep ?? (inRoom ? Number(root.dataset.step) : -1);
  return stops.find((stop) => stop.step > after && (!isAnswered(stop) || stop.id === classAsks)) || null;
}

function hiddenFrom() {
  const stop = holdingStop();
  return stop ? stop.step : null;
}

// The lesson's texts, with the notes of the steps before `until` only.
let notesUntil = 0;
let notesAsked = 0;
function fetchLesson(until) {
  const asked = ++notesAsked;
  const query = until === null ? "" : `?until=${until}`;
  return getJSON(`/api/lessons/${encodeURIComponent(lessonId)}${query}`).then((answer) => {
    if (asked !== notesAsked) return answer; // a later horizon's answer is coming
    lesson = answer;
    notesUntil = answer.until;
    if (shownStep !== null) showNotes(shownStep);
    if (asking) renderQuestion(asking);
    return answer;
  });
}

function publishHidden(from) {
  if (from === null) delete root.dataset.hiddenFrom;
  else root.dataset.hiddenFrom = String(from);
}

// Called whenever a question is answered or the class's question changes: the steps up
// to the next unanswered question appear (step.js redraws the diagram), with their notes.
function updateHidden() {
  const from = hiddenFrom();
  const before = root.dataset.hiddenFrom === undefined ? null : Number(root.dataset.hiddenFrom);
  if (from === before) return;
  publishHidden(from);
  root.dispatchEvent(new CustomEvent("h3learn:hidden", { detail: { from } }));
  const notesNeeded = from ?? (lesson ? lesson.count : Infinity);
  if (notesNeeded > notesUntil) fetchLesson(from).catch(showLoadError);
}

publishHidden(hiddenFrom()); // before step.js reads it
const lessonReady = fetchLesson(hiddenFrom());

function unansweredBefore(step) {
  return stops.find((stop) => stop.step <= step && !isAnswered(stop)) || null;
}

function go(step) {
  root.dispatchEvent(new CustomEvent("h3learn:go", { detail: { step } }));
}

root.addEventListener("h3learn:beforestep", (event) => {
  // A classroom following its teacher ("room") goes where the teacher goes.
  if (event.detail.by === "room" || (event.detail.by === "load" && inRoom)) return;
  const stop = unansweredBefore(event.detail.step);
  if (!stop) return;
  event.preventDefault();
  // Asked for a step past the question, or for the question's own step other than by
  // stepping on to it (a deep link, the RFC reader, a jump): say why the page stops here.
  const { step, current } = event.detail;
  if (step > stop.step || (step === stop.step && current !== stop.step - 1)) detour = step;
  else if (detour !== null && detour < stop.step) detour = null;
  ask(stop);
  go(stop.step - 1);
});

root.addEventListener("h3learn:step", (event) => {
  const step = event.detail.step;
  shownStep = step;
  progress.last = step;
  saveProgress(lessonId, progress);
  if (asking && step !== asking.step - 1) hideQuestion();
  if (resultOf && step !== resultOf.step - 1) hideResult();
  if (detour !== null && step >= detour) detour = null;
  if (solved && step !== solved.stop.step && step !== solved.stop.step - 1) solved = null;
  showNotes(step);
  updateHidden(); // a class may have moved this page past a question
});

// -- notes ---------------------------------------------------------------------------------

function showNotes(step) {
  const box = clear($("lesson-notes"));
  const answered = Object.keys(progress.answered).length;
  $("lesson-progress").textContent = stops.length
    ? `Questions answered: ${answered} of ${stops.length}.` : "";
  // The notes of this step are on their way (a question was just answered).
  const loading = !lesson || step >= notesUntil;
  box.setAttribute("aria-busy", String(loading));
  if (loading) return;
  if (solved && step === solved.stop.step) box.append(resultBlock(solved.answer, true));
  for (const note of lesson.notes[String(step)] || []) {
    box.append(h("article", { class: "note" },
      note.title ? h("h3", {}, note.title) : null,
      markdownBlock("div", "note-text", note.html),
      note.rfc.length ? h("p", { class: "note-rfc" }, "Explains: ",
        ...note.rfc.flatMap((rfc, index) => [index ? ", " : "", link(rfc), ` ${rfc.title}`])) : null));
  }
  if (step === lesson.count - 1 && lesson.conclusion_html) {
    box.append(h("article", { class: "note conclusion" }, h("h3", {}, "What you have seen"),
      markdownBlock("div", "note-text", lesson.conclusion_html),
      lesson.following.length ? h("p", { class: "next-lessons" }, "Next: ",
        ...lesson.following.flatMap((next, index) => [index ? ", " : "",
          h("a", { href: next.url }, `${next.number}. ${next.title}`)])) : null));
  }
  if (!box.childNodes.length) {
    box.append(h("p", { class: "muted" }, "No note for this step: look at the bytes and the state."));
  }
}

// -- checkpoints -----------------------------------------------------------------------------

function ask(stop) {
  asking = stop;
  renderQuestion(stop);
}

// The checkpoint box goes: a control in it that had the focus hands it to the step's heading.
function hideBox() {
  keepFocus(() => { $("checkpoint").hidden = true; }, "step-heading");
}

function hideQuestion() {
  asking = null;
  hideBox();
}

function hideResult() {
  resultOf = null;
  hideBox();
}

function renderQuestion(stop) {
  resultOf = null;
  const box = clear($("checkpoint"));
  box.hidden = false;
  if (!lesson) {
    box.append(h("p", {}, "Loading the question…"));
    return;
  }
  const checkpoint = lesson.checkpoint_list.find((c) => c.id === stop.id);
  const form = h("form", { class: "checkpoint-form", id: "checkpoint-form" });
  // The question describes the answer fields (aria-describedby): read out with them.
  const question = markdownBlock("div", "question", checkpoint.question_html);
  question.id = "checkpoint-question";
  let field;
  if (checkpoint.kind === "choice") {
    field = h("fieldset", { class: "choices", "aria-describedby": "checkpoint-question" }, h("legend", {}, "Your answer"),
      ...checkpoint.choices.map((choice, index) => h("label", {},
        h("input", { type: "radio", name: "answer", value: choice, id: `choice-${index}`, required: true }),
        ` ${choice}`)));
  } else {
    field = h("label", {}, "Your answer ",
      h("input", {
        type: "text", name: "answer", id: "checkpoint-answer", required: true, autocomplete: "off",
        inputmode: checkpoint.kind === "number" ? "numeric" : "text", "aria-describedby": "checkpoint-question",
      }));
  }
  const feedback = h("div", { id: "checkpoint-feedback", class: "feedback", role: "status" });
  form.append(field,
    h("p", { class: "checkpoint-buttons" },
      h("button", { type: "submit", id: "checkpoint-check" }, "Check"),
      " ",
      h("button", { type: "button", id: "checkpoint-reveal", class: "secondary" }, "Show the answer")),
    feedback);
  const waiting = detour === null ? 0 : stops.filter((s) => s.step <= detour && !isAnswered(s)).length;
  if (waiting) {
    box.append(h("p", { class: "detour", id: "checkpoint-detour" },
      `You asked for step ${detour}: ${waiting === 1 ? "this question stands" : `${waiting} questions stand`}`
      + " before it. Answer or reveal each to get there."));
  } else detour = null;
  box.append(
    h("h3", {}, `Predict before step ${stop.step}`),
    question,
    form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = new FormData(form).get("answer");
    if (chosen !== null && String(chosen).trim() !== "") submit(stop, { answer: String(chosen) });
  });
  $("checkpoint-reveal").addEventListener("click", () => submit(stop, { reveal: true }));
  const first = box.querySelector("input");
  if (first) first.focus({ preventScroll: true });
  root.dispatchEvent(new CustomEvent("h3learn:checkpoint", { detail: { stop, checkpoint, box } }));
}

async function submit(stop, body) {
  const feedback = $("checkpoint-feedback");
  let answer;
  try {
    const response = await fetch(
      `/api/lessons/${encodeURIComponent(lessonId)}/checkpoints/${encodeURIComponent(stop.id)}`,
      { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json" },
        body: JSON.stringify(body) });
    answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `${response.status}`);
  } catch (failure) {
    clear(feedback).append(h("p", { class: "error" }, `Could not check the answer: ${failure.message}`));
    return;
  }
  if (!answer.correct && !body.reveal) {
    clear(feedback).append(h("p", { class: "wrong" }, "Not quite. Try again, or show the answer."),
      answer.hint_html ? markdownBlock("div", "hint", answer.hint_html) : "");
    return;
  }
  solve(stop, answer, answer.correct ? "right" : "shown");
  root.dispatchEvent(new CustomEvent("h3learn:solved", { detail: { stop, answer } }));
  updateHidden();
  hideQuestion();
  const box = clear($("checkpoint"));
  box.hidden = false;
  resultOf = stop;
  // A learner on their way to a later step (detour) goes on to it.
  const target = detour !== null && detour > stop.step ? detour : stop.step;
  const next = h("button", { type: "button", id: "checkpoint-continue", "aria-describedby": "checkpoint-result" },
    target === stop.step ? `Reveal step ${stop.step} →` : `On to step ${target} →`);
  next.addEventListener("click", () => {
    hideResult();
    go(target);
  });
  const result = resultBlock(answer, false);
  box.append(result, h("p", {}, next));
  next.focus({ preventScroll: true });
  // The verdict and its explanation are said (a status region kept on the page: one added
  // with its text already in it is not announced), and describe the button that has the focus.
  $("checkpoint-status").textContent = result.textContent;
}

// A checkpoint answered (or its answer shown): kept in this browser's progress, and its
// result and explanation shown with the step it stopped before.
function solve(stop, answer, mark) {
  progress.answered[stop.id] = mark;
  saveProgress(lessonId, progress);
  solved = { stop, answer };
}

// For a class (classroom_lesson.js).
export const lessonPage = {
  lessonId,
  stops,
  // Which checkpoints still stop this page (a teacher presenting: those not yet asked).
  setAnsweredRule(rule) {
    isAnswered = rule;
    updateHidden();
  },
  // The class is being asked this checkpoint (its id), or nothing (null): its step and
  // what follows stay hidden until the answer is revealed, even to those who answered it.
  setClassQuestion(stopId) {
    classAsks = stopId;
    updateHidden();
  },
  // The lesson as GET /api/lessons/<id> gives it, when it has arrived.
  ready: lessonReady,
  // The class was shown a checkpoint's answer: `answer` as the checkpoint API gives it
  // ({correct, answer, explain_html}); `mark` "right" or "shown" is kept in this
  // learner's progress (null: shown, but not kept: the teacher's own progress).
  solvedInClass(stopId, answer, mark) {
    const stop = stops.find((each) => each.id === stopId);
    if (!stop) return;
    if (mark) solve(stop, answer, mark);
    else solved = { stop, answer };
    if (classAsks === stopId) classAsks = null;
    updateHidden();
    if (asking && asking.id === stopId) hideQuestion();
    if (shownStep !== null) showNotes(shownStep);
  },
};

function resultBlock(answer, compact) {
  return h("div", { class: `result ${answer.correct ? "right" : "shown"}`, id: compact ? null : "checkpoint-result" },
    h("p", { class: "verdict" }, answer.correct ? "Right." : `The answer: ${answer.answer}`),
    markdownBlock("div", "explain", answer.explain_html));
}

function showLoadError(failure) {
  $("lesson-notes").append(h("p", { class: "error" }, `Could not load the lesson: ${failure.message}`));
}
lessonReady.catch(showLoadError);
