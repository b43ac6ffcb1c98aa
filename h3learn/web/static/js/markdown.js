// Lesson and annotation text arrives as HTML the server rendered from Markdown with raw
// HTML switched off (h3learn/web/markdown.py): a `<script>` written in a lesson is already
// escaped to text there. This is the one place the page inserts such HTML, and it inserts
// nothing else: trace data (header values, uploads) always goes through dom.js `h()`.
export function markdownBlock(tag, className, html) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  const parsed = new DOMParser().parseFromString(`<body>${html}</body>`, "text/html");
  node.append(...parsed.body.childNodes);
  return node;
}
