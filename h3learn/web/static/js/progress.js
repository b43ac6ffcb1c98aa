// A learner's progress through the lessons, kept in this browser only (localStorage):
// which checkpoints were answered, and the last step seen. Nothing is sent to the server.
const PREFIX = "h3learn.lesson.";

export function loadProgress(lessonId) {
  try {
    const saved = JSON.parse(localStorage.getItem(PREFIX + lessonId) || "null");
    if (saved && typeof saved === "object" && saved.answered && typeof saved.answered === "object") {
      return { answered: saved.answered, last: Number.isInteger(saved.last) ? saved.last : 0 };
    }
  } catch {
    // A broken entry (edited by hand, say) is treated as no progress.
  }
  return { answered: {}, last: 0 };
}

export function saveProgress(lessonId, progress) {
  try {
    localStorage.setItem(PREFIX + lessonId, JSON.stringify(progress));
  } catch {
    // Storage full or disabled: progress is simply not kept.
  }
}
