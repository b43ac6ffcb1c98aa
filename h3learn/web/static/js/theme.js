// Projector mode: larger type and higher contrast, remembered in localStorage.
const KEY = "h3learn.projector";
const button = document.getElementById("projector-toggle");

export function setProjector(on) {
  document.documentElement.classList.toggle("projector", on);
  if (button) button.setAttribute("aria-pressed", String(on));
  try {
    localStorage.setItem(KEY, on ? "1" : "0");
  } catch {
    // storage may be disabled; the mode still applies to this page
  }
  document.dispatchEvent(new CustomEvent("h3learn:projector", { detail: on }));
}

export function toggleProjector() {
  setProjector(!document.documentElement.classList.contains("projector"));
}

let stored = false;
try {
  stored = localStorage.getItem(KEY) === "1";
} catch {
  stored = false;
}
setProjector(stored);
if (button) button.addEventListener("click", toggleProjector);
