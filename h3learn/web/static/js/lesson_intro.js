// Lesson pages outside the stepper: the index's lesson list and a lesson's introduction
// show the progress kept in this browser (progress.js).
import { loadProgress } from "./progress.js";

for (const item of document.querySelectorAll(".lesson-item")) {
  const progress = loadProgress(item.dataset.lesson);
  const answered = Object.keys(progress.answered).length;
  const total = Number(item.dataset.checkpoints);
  if (answered || progress.last) {
    item.querySelector(".lesson-progress").textContent =
      `${answered} of ${total} questions answered, last at step ${progress.last}`;
  }
}

const intro = document.getElementById("lesson-intro");
if (intro) {
  const progress = loadProgress(intro.dataset.lesson);
  if (progress.last > 0) {
    const link = document.getElementById("resume-link");
    link.href = `/lesson/${encodeURIComponent(intro.dataset.lesson)}/step/${progress.last}`;
    link.textContent = `Continue at step ${progress.last}`;
    document.getElementById("lesson-resume").hidden = false;
  }
}
