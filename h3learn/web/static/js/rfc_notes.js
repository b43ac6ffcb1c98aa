// The RFC panel's explanations: for each section governing the step, what it says, why it
// exists and what learners get wrong (lessons/rfc/*.toml, rendered by the server), with a
// link to the official text and to the section in the RFC reader.
import { h } from "./dom.js";
import { markdownBlock } from "./markdown.js";

export function renderAnnotations(links) {
  return links.map((rfc) => {
    if (!rfc.annotation) {
      return h("p", { class: "annotation-missing error" }, rfc.missing || `${rfc.label}: no annotation`);
    }
    const part = (name, html) => [h("h3", {}, name), markdownBlock("div", "annotation-text", html)];
    const details = h("details", { class: "annotation", open: true },
      h("summary", {}, `${rfc.label} ${rfc.title}`,
        rfc.annotation.normative ? "" : h("span", { class: "badge" }, "informative")),
      ...part("What it says", rfc.annotation.says_html),
      ...part("Why", rfc.annotation.why_html),
      ...part("Common mistakes", rfc.annotation.pitfalls_html),
      h("p", { class: "annotation-links" },
        h("a", { href: rfc.url, rel: "external" }, `Read ${rfc.label}`), " · ",
        h("a", { href: rfc.annotation.reader }, "in the RFC reader")));
    return details;
  });
}
