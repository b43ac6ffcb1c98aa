"""Every RFC section the project cites has a title and an annotation (issue 5).

A citation written ``RFC#section`` (``"9110#8.6"``, ``"9204#B.1"``) ends up in a trace, a
lesson note or the RFC reader, and the step view shows that section's title (from
`h3learn.curriculum.rfc_toc.TITLES`) and its annotation (lessons/rfc/<number>.toml). A
section cited without either shows an error on the page. So every such citation found in
the sources under h3learn/ and in lessons/ must be in the table of contents and annotated,
whichever RFC it belongs to. (Prose like "RFC 9110 §5.5" in a docstring or an explanation is
text for the reader, not a link, and is not checked here.) tests/curriculum/test_lessons.py
checks the same of every section a recorded lesson's steps cite, since some are built at
run time.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from h3learn.curriculum.annotations import load_annotations
from h3learn.curriculum.rfc_toc import TITLES

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "lessons"
#: A section reference standing on its own: not part of a longer number or word.
CITATION = re.compile(
    r"(?<![0-9A-Za-z#])(?P<rfc>[0-9]{4})#(?P<part>[0-9]+(?:\.[0-9]+)*|[A-Z](?:\.[0-9]+)*)"
    r"(?![0-9A-Za-z])"
)


def cited_sections() -> dict[str, list[str]]:
    """Section -> the files citing it, over h3learn/**/*.py and lessons/**/*.toml."""
    files = [*sorted((ROOT / "h3learn").rglob("*.py")), *sorted(LESSONS.rglob("*.toml"))]
    found: dict[str, list[str]] = {}
    for path in files:
        for match in CITATION.finditer(path.read_text(encoding="utf-8")):
            section = f"{match['rfc']}#{match['part']}"
            found.setdefault(section, []).append(str(path.relative_to(ROOT)))
    return found


CITED = cited_sections()
ANNOTATIONS = load_annotations(LESSONS / "rfc")


def test_the_scan_finds_citations_of_several_rfcs() -> None:
    """A guard against a scan that silently finds nothing."""
    rfcs = {section.partition("#")[0] for section in CITED}
    assert {"9114", "9204", "9000", "9110", "8999", "9001"} <= rfcs
    assert "9110#8.6" in CITED and "h3learn/h3/content_length.py" in CITED["9110#8.6"]


@pytest.mark.parametrize("section", sorted(CITED))
def test_every_cited_section_has_a_title_and_an_annotation(section: str) -> None:
    where = ", ".join(sorted(set(CITED[section]))[:3])
    assert section in TITLES, f"{section} (cited in {where}) has no title in rfc_toc.TITLES"
    annotation = ANNOTATIONS.get(section)
    # (The loader refuses an annotation whose title differs from the table of contents.)
    assert annotation is not None, (
        f"{section} (cited in {where}) has no [[section]] in lessons/rfc/"
        f"{section.partition('#')[0]}.toml"
    )
