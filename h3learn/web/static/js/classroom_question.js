// The classroom's question box (templates/classroom/panel.html), for both roles.
//
// Student: answers the open question, by choosing an option or by typing a short answer
// (a number or a few words); may change it until the reveal. The server reads a typed
// answer (57, 0x39 and " 57 " are one answer) and says how it counted it.
// Teacher: sees the spread as answers arrive (counts per option, or the most given typed
// answers) and reveals it. After the reveal everyone sees the spread, the answer and its
// explanation when the server knows them (a lesson's checkpoint), and a student sees
// whether their own answer was right, as the server judged the answers.
// Protocol: docs/web-api.md, "Classroom". Nothing here decides what is right.
import { clear, h, keepFocus } from "./dom.js";
import { markdownBlock } from "./markdown.js";

const $ = (id) => document.getElementById(id);
const MAX_ANSWER_CHARS = 100; // protocol.py MAX_ANSWER_CHARS

// room: {emit(event, payload) -> Promise(answer), code(), role(), students()}
export function questionBox(room) {
  let question = null; // the open (or revealed) question
  let result = null; // its tally, or the reveal's
  let mine = null; // this student's answer: {id, key}, key as the server counted it

  function note(text) {
    $("question-note").textContent = text;
  }

  async function send(payload) {
    const answer = await room.emit("answer", { code: room.code(), question: question.id, ...payload });
    if (answer.error) {
      note(answer.error);
      return;
    }
    mine = { id: question.id, key: answer.counted_as };
    if (question.kind === "choice") render(); // (a typed answer's box keeps its focus)
    const shown = question.kind === "choice" ? question.options[Number(mine.key)] : mine.key;
    note(`Your answer is in (anonymous): ${shown}. You may change it until the teacher reveals.`);
  }

  // While the reveal is on its way the button says it is unavailable (aria-disabled, not
  // disabled: a disabled button would drop the focus); the reveal then replaces it with Close.
  async function reveal() {
    const button = $("question-reveal");
    if (button.getAttribute("aria-disabled") === "true") return;
    button.setAttribute("aria-disabled", "true");
    const answer = await room.emit("reveal", { code: room.code(), token: room.token(), question: question.id });
    button.removeAttribute("aria-disabled");
    if (answer.error) note(answer.error);
  }

  function mineIsMine() {
    return mine && question && mine.id === question.id;
  }

  // Was this key judged right? Only after the reveal, and only as the server said.
  function judgedRight(key) {
    if (!question.revealed) return false;
    if (question.kind === "choice") return question.correct !== null && Number(key) === question.correct;
    return question.right.includes(key);
  }

  function row(label, count, total, key, pressable) {
    const parts = [label];
    if (count !== null) {
      const share = Math.round((100 * count) / Math.max(1, total));
      parts.push(h("span", { class: "count" }, ` · ${count} ${count === 1 ? "answer" : "answers"} (${share}%)`));
    }
    if (judgedRight(key)) parts.push(h("strong", { class: "correct" }, " ✓ right"));
    const pressed = mineIsMine() && mine.key === key;
    const item = pressable
      ? h("button", { type: "button", data: { option: key }, "aria-pressed": String(Boolean(pressed)) }, ...parts)
      : h("p", { class: "option", data: { option: key } }, ...parts);
    if (pressable) item.addEventListener("click", () => send({ option: Number(key) }));
    if (count !== null) {
      const spread = h("span", { class: "spread" });
      spread.style.width = `${(100 * count) / Math.max(1, total)}%`;
      item.append(spread);
    }
    return item;
  }

  function choiceRows(canAnswer) {
    const counts = result && result.counts;
    return question.options.map((text, index) =>
      row(text, counts ? counts[index] : null, result ? result.answered : 0, String(index), canAnswer));
  }

  function typedRows() {
    if (!result || !result.top) return [];
    const rows = result.top.map(([key, count]) => row(key, count, result.answered, key, false));
    const others = result.distinct - result.top.length;
    if (others > 0) rows.push(h("p", { class: "muted" }, `and ${others} other ${others === 1 ? "answer" : "answers"}`));
    return rows;
  }

  function typedForm() {
    const input = h("input", {
      type: "text", id: "question-input", maxlength: String(MAX_ANSWER_CHARS), autocomplete: "off",
      required: true, inputmode: question.kind === "number" ? "numeric" : "text",
      "aria-describedby": "question-note",
    });
    if (mineIsMine()) input.value = mine.key;
    const form = h("form", { class: "question-form", id: "question-form" },
      h("label", { for: "question-input" }, question.kind === "number" ? "Your answer (a number)" : "Your answer"),
      input, h("button", { type: "submit", id: "question-send" }, "Send"));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (input.value.trim()) send({ text: input.value });
    });
    return form;
  }

  function verdict() {
    const parts = [];
    if (question.answer !== null) parts.push(h("p", { class: "question-answer" }, "The answer: ", h("strong", {}, question.answer)));
    if (room.role() === "student") {
      if (!mineIsMine()) parts.push(h("p", { class: "question-mine" }, "You did not answer."));
      else if (question.answer !== null || question.correct !== null) {
        const right = judgedRight(mine.key);
        const shown = question.kind === "choice" ? question.options[Number(mine.key)] : mine.key;
        parts.push(h("p", { class: `question-mine ${right ? "right" : "wrong"}` },
          `Your answer, ${shown}, ${right ? "is right." : "is not right."}`));
      }
    }
    if (question.explain_html) parts.push(markdownBlock("div", "question-explain", question.explain_html));
    return parts;
  }

  // Drawn again (an answer, a tally, the reveal): an option that had the focus keeps it in
  // its new button; if the options can no longer be pressed (the reveal), the focus goes
  // to the Close button.
  function render() {
    const had = document.activeElement;
    const option = had && had.closest("#question-options") ? had.dataset.option : undefined;
    keepFocus(draw,
      () => option === undefined ? null : $("question-options").querySelector(`button[data-option="${CSS.escape(option)}"]`),
      "question-close", "step-heading");
  }

  function draw() {
    if (!question) return;
    const box = $("classroom-question");
    box.hidden = false;
    box.dataset.kind = question.kind;
    box.dataset.revealed = String(question.revealed);
    const prompt = clear($("question-prompt"));
    if (question.prompt_html) prompt.append(markdownBlock("div", "", question.prompt_html));
    else prompt.textContent = question.prompt;
    const canAnswer = room.role() === "student" && !question.revealed;
    const typed = question.kind !== "choice";
    const rows = typed ? typedRows() : choiceRows(canAnswer);
    clear($("question-options")).append(...(typed && canAnswer ? [typedForm()] : []), ...rows);
    clear($("question-result")).append(...(question.revealed ? verdict() : []));
    const teaching = room.role() === "teacher";
    $("question-reveal").hidden = !teaching || question.revealed;
    $("question-reveal").removeAttribute("aria-disabled");
    $("question-close").hidden = !question.revealed;
    if (question.revealed) note(`Revealed: ${result ? result.answered : 0} answered.`);
    else if (teaching) note(`${result ? result.answered : 0} of ${room.students()} answered.`);
    else if (!mineIsMine()) {
      // The status says the question itself: a screen reader hears it as it opens.
      const asked = $("question-prompt").textContent.trim();
      note(`Question: ${asked} ${typed ? "Type your answer and send it." : "Choose an answer."}`);
    }
  }

  $("question-reveal").addEventListener("click", reveal);
  $("question-close").addEventListener("click", () => {
    // on this page only: the class goes on
    keepFocus(() => { $("classroom-question").hidden = true; }, "step-heading");
  });

  return {
    get mine() { return mineIsMine() ? mine : null; },
    // The class has ended: its question goes with it (nobody can answer or reveal it now).
    end() {
      question = null;
      result = null;
      $("classroom-question").hidden = true;
    },
    // After a reconnect: this page's answer to the still open question, counted again.
    resend() {
      if (!mineIsMine() || question.revealed) return;
      send(question.kind === "choice" ? { option: Number(mine.key) } : { text: mine.key });
    },
    // A question opened (result: null), or known on joining (with its tally, if any).
    show(opened, tally = null) {
      if (!question || question.id !== opened.id || opened.revealed !== question.revealed) result = null;
      question = opened;
      if (tally) result = tally;
      render();
    },
    tally(tally) {
      if (room.role() !== "teacher" || !question || question.id !== tally.id || question.revealed) return;
      result = tally;
      render();
    },
    revealed(message) {
      question = message.question;
      result = message;
      render();
    },
    // The student count changed (the teacher's "n of m answered").
    refresh() {
      if (question && !question.revealed && room.role() === "teacher") render();
    },
  };
}
