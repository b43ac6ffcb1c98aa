"""The annotated RFC: each section explained in the project's own words (lessons/rfc/*.toml).

One file per RFC, ``lessons/rfc/<number>.toml``::

    rfc = 9204
    title = "QPACK: Field Compression for HTTP/3"

    [[section]]
    id = "4.5.1.1"            # "A", "B.1" for appendices
    title = "Required Insert Count"
    normative = true
    says = \"\"\"What the section says (Markdown).\"\"\"
    why = \"\"\"Why it exists.\"\"\"
    pitfalls = \"\"\"What learners usually get wrong.\"\"\"

Read strictly (source.py): an unknown key, a wrong type, an empty text, a section listed
twice, an ``id`` that is not a section of the RFC (RFC 9114 and RFC 9204 are checked
against their whole table of contents, rfc_toc.py), or a title that differs from the RFC's
is an error naming the file and line. `Annotations.missing` says which sections of the
table of contents have no annotation yet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from h3learn.curriculum.rfc_toc import COMPLETE_RFCS, RFC_TITLES, TITLES, sections_of
from h3learn.curriculum.source import Document, SourceError, Table

#: A section id inside one RFC: "7.2.4", or an appendix "A", "B.1".
SECTION_ID = re.compile(r"[0-9]+(\.[0-9]+)*|[A-Z](\.[0-9]+)*")
#: An annotation file's name: the RFC number.
FILE_NAME = re.compile(r"[0-9]{3,5}\.toml")


@dataclass(frozen=True, slots=True)
class Annotation:
    """One section explained: what it says, why it exists, and the usual mistakes."""

    section: str  # "9204#4.5.1.1"
    title: str
    normative: bool
    says: str
    why: str
    pitfalls: str
    file: str
    line: int


@dataclass
class Annotations:
    """Every annotation of every RFC file read, by section reference."""

    by_section: dict[str, Annotation] = field(default_factory=dict)
    #: RFC number -> its title, as each file states it.
    rfcs: dict[str, str] = field(default_factory=dict)

    def get(self, section: str) -> Annotation | None:
        return self.by_section.get(section)

    def title(self, section: str) -> str:
        """The section's title: from the table of contents, else from its annotation."""
        if section in TITLES:
            return TITLES[section]
        annotation = self.by_section.get(section)
        return annotation.title if annotation else ""

    def sections_of(self, rfc: str) -> list[str]:
        """The sections of one RFC the reader lists: the table of contents and the annotated."""
        from h3learn.curriculum.rfc_toc import sort_key

        listed = set(sections_of(rfc)) | {s for s in self.by_section if s.startswith(f"{rfc}#")}
        return sorted(listed, key=sort_key)

    def missing(self, rfc: str) -> list[str]:
        """Sections of the table of contents of ``rfc`` with no annotation."""
        return [s for s in sections_of(rfc) if s not in self.by_section]

    def require(self, section: str) -> Annotation:
        """The annotation of ``section``; a clear error naming it when there is none."""
        annotation = self.by_section.get(section)
        if annotation is None:
            number = section.partition("#")[0]
            raise LookupError(
                f"{section} ({TITLES.get(section, 'untitled')}) has no annotation:"
                f" add a [[section]] with id = {section.partition('#')[2]!r} to"
                f" lessons/rfc/{number}.toml"
            )
        return annotation


def load_annotations(folder: Path) -> Annotations:
    """Read every ``<number>.toml`` in ``folder`` (none at all is allowed: an empty result)."""
    annotations = Annotations()
    if not folder.is_dir():
        return annotations
    for path in sorted(folder.glob("*.toml")):
        if not FILE_NAME.fullmatch(path.name):
            raise SourceError(
                str(path), 1, "an annotation file is named after its RFC, e.g. 9204.toml"
            )
        read_annotation_file(Document.read(path), path.stem, annotations)
    return annotations


def read_annotation_file(document: Document, expected_rfc: str, into: Annotations) -> None:
    """Check one file and add its sections to ``into``."""
    root = document.root()
    number = root.integer("rfc", required=True)
    if str(number) != expected_rfc:
        raise root.error("rfc", f"is {number}, but the file is named {expected_rfc}.toml")
    rfc = str(number)
    title = root.required_text("title")
    known_title = RFC_TITLES.get(rfc)
    if known_title is not None and _same(title, known_title) is False:
        raise root.error("title", f"RFC {rfc} is titled {known_title!r}")
    into.rfcs[rfc] = title
    seen: dict[str, int] = {}
    for table in root.tables("section"):
        annotation = _read_section(table, rfc)
        if annotation.section in seen:
            raise table.error(
                "id",
                f"section {annotation.section} is annotated twice (first at line"
                f" {seen[annotation.section]})",
            )
        seen[annotation.section] = annotation.line
        into.by_section[annotation.section] = annotation
    root.finish()


def _read_section(table: Table, rfc: str) -> Annotation:
    section_id = table.required_text("id")
    if not SECTION_ID.fullmatch(section_id):
        raise table.error("id", f"{section_id!r} is not a section id like '4.5.1' or 'B.1'")
    section = f"{rfc}#{section_id}"
    known = TITLES.get(section)
    if known is None and rfc in COMPLETE_RFCS:
        raise table.error("id", f"RFC {rfc} has no section {section_id}")
    title = table.required_text("title")
    if known is not None and not _same(title, known):
        raise table.error("title", f"section {section_id} of RFC {rfc} is titled {known!r}")
    normative = table.flag("normative", True)
    if "normative" not in table.data:
        raise table.error(None, "'normative' is missing (true or false)")
    annotation = Annotation(
        section=section,
        title=title,
        normative=normative,
        says=table.required_text("says"),
        why=table.required_text("why"),
        pitfalls=table.required_text("pitfalls"),
        file=table.document.file,
        line=table.document.locator.line(table.path),
    )
    table.finish()
    return annotation


def _same(a: str, b: str) -> bool:
    """Titles compared as a reader would: case and spacing aside."""
    return " ".join(a.lower().split()) == " ".join(b.lower().split())
