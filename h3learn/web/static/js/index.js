// The trace list page: upload a trace file, then open it (errors are shown as text).
const form = document.getElementById("upload-form");
const input = document.getElementById("upload-file");
const error = document.getElementById("upload-error");

const submit = form.querySelector("button[type=submit]");
// A page brought back by the browser's Back button keeps its state: the button too.
window.addEventListener("pageshow", () => { submit.disabled = false; });

// One upload at a time: a double click would otherwise save the file twice.
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.hidden = true;
  if (!input.files.length || submit.disabled) return;
  submit.disabled = true;
  const body = new FormData();
  body.append("file", input.files[0]);
  let answer = null;
  let response = null;
  try {
    response = await fetch("/api/traces", { method: "POST", body });
    answer = await response.json();
  } catch (failure) {
    answer = { error: `the upload failed: ${failure.message}` };
  }
  if (response && response.ok && answer && answer.id) {
    window.location.assign(`/trace/${encodeURIComponent(answer.id)}/step/0`);
    return;
  }
  error.textContent = `Could not open this file: ${answer && answer.error ? answer.error : "unknown error"}`;
  error.hidden = false;
  submit.disabled = false;
});
