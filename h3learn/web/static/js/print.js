// The handout page (/trace/<id>/print): everything is rendered on the server; this only
// wires the Print button (a script file, since the page allows no inline script).
const button = document.getElementById("print-button");
if (button) button.addEventListener("click", () => window.print());
