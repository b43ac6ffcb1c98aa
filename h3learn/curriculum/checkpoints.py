"""Predict checkpoints: a question the learner answers before a step is revealed.

A checkpoint stops the learner just before the step its ``before`` selector names, asks
``question``, and checks the answer (on the server: the browser never sees the answer
before it is given). Three kinds::

    kind = "number"   answer = 3                      any way of writing 3 ("3", " 03 ")
    kind = "choice"   choices = ["A", "B"], answer = "B"
    kind = "text"     answer = "control", accept = ["the control stream"]
                      (compared without case, spacing or a final full stop)

The answer must be what the trace shows, and the checkpoint says where (``expect`` gives
the value the trace holds when that is not the answer's wording, e.g. a choice "one static
table entry" shown as ``IndexedFieldLine``): ``from_trace`` is
a path into the event (``data.prefix.required_insert_count``, ``data.code_name``,
``length`` for the number of bytes, ``stream_id``, ``endpoint``, ``name``) of the step
itself or of the step ``at`` selects; ``count_of`` is a selector whose number of matches
is the answer ("how many inserts ..."). `verify_checkpoint` compares them when the lesson
is checked, so a scenario change that alters the answer cannot go unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from h3learn.curriculum.recording import Recording
from h3learn.curriculum.selectors import Selector, data_value, matching, read_selector, select
from h3learn.curriculum.source import Path_, Table
from h3learn.events import Event

KINDS = ("number", "choice", "text")

#: ``from_trace`` paths outside ``data``: the event's own fields.
EVENT_FIELDS: dict[str, Callable[[Event], Any]] = {
    "length": lambda event: len(event.raw),
    "stream_id": lambda event: event.stream_id,
    "endpoint": lambda event: event.endpoint,
    "name": lambda event: event.name,
}


@dataclass(frozen=True, slots=True)
class Checkpoint:
    id: str
    before: Selector
    question: str
    kind: str
    answer: int | str
    explain: str
    choices: tuple[str, ...] = ()
    accept: tuple[str, ...] = ()
    hint: str = ""
    from_trace: str | None = None
    #: What the trace shows when ``answer`` is right, if not the answer itself.
    expect: int | str | None = None
    at: Selector | None = None
    count_of: Selector | None = None
    path: Path_ = ()

    @property
    def answer_path(self) -> Path_:
        return (*self.path, "answer")

    @property
    def proof_path(self) -> Path_:
        if self.count_of is not None:
            return self.count_of.path
        if self.at is not None:
            return self.at.path
        return (*self.path, "from_trace")

    def is_correct(self, given: str) -> bool:
        """Is the learner's answer (as typed or chosen) this checkpoint's answer?"""
        if self.kind == "number":
            number = parse_number(given)
            return number is not None and number == self.answer
        if self.kind == "choice":
            return given == self.answer
        wanted = {normalise(str(self.answer)), *(normalise(a) for a in self.accept)}
        return normalise(given) in wanted

    def public(self) -> dict[str, Any]:
        """What the browser may know before the learner answers: never the answer."""
        return {
            "id": self.id,
            "kind": self.kind,
            "question": self.question,
            "choices": list(self.choices),
        }


def parse_number(text: str) -> int | None:
    text = text.strip().replace("_", "")
    try:
        return int(text, 0) if text.lower().startswith(("0x", "0b")) else int(text)
    except ValueError:
        return None


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().rstrip(".").strip()).casefold()


def read_checkpoint(table: Table, index: int) -> Checkpoint:
    checkpoint_id = table.text("id", str(index + 1))
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,40}", checkpoint_id):
        raise table.error("id", "letters, digits, '-' and '_' only (at most 40)")
    before = table.table("before", required=True)
    assert before is not None
    kind = table.text("kind", required=True)
    if kind not in KINDS:
        raise table.error("kind", f"must be one of {', '.join(KINDS)}")
    answer = table.raw("answer")
    if answer is None:
        raise table.error(None, "'answer' is missing")
    choices = table.texts("choices")
    accept = table.texts("accept")
    if kind == "number":
        if not isinstance(answer, int) or isinstance(answer, bool):
            raise table.error("answer", "a number checkpoint's answer is an integer")
    elif not isinstance(answer, str):
        raise table.error("answer", f"a {kind} checkpoint's answer is a string")
    if kind == "choice":
        if len(choices) < 2:
            raise table.error("choices" if choices else None, "list at least two choices")
        if answer not in choices:
            raise table.error("answer", f"{answer!r} is not one of the choices")
        if len(set(choices)) != len(choices):
            raise table.error("choices", "a choice is listed twice")
    elif choices:
        raise table.error("choices", "only a choice checkpoint has choices")
    if accept and kind != "text":
        raise table.error("accept", "only a text checkpoint accepts other wordings")
    from_trace = table.text("from_trace")
    at = table.table("at")
    count_of = table.table("count_of")
    if (from_trace is None) == (count_of is None):
        raise table.error(
            None, "say where the trace shows the answer: 'from_trace' (a path) or 'count_of'"
        )
    if at is not None and from_trace is None:
        raise table.error("at", "'at' says which step 'from_trace' reads")
    if from_trace is not None and not (
        from_trace in EVENT_FIELDS or from_trace.startswith("data.")
    ):
        raise table.error("from_trace", f"is 'data.<path>' or one of {', '.join(EVENT_FIELDS)}")
    checkpoint = Checkpoint(
        id=checkpoint_id,
        before=read_selector(before),
        question=table.required_text("question"),
        kind=kind,
        answer=answer,
        explain=table.required_text("explain"),
        choices=choices,
        accept=accept,
        hint=table.text("hint", ""),
        from_trace=from_trace,
        expect=_expect(table),
        at=read_selector(at) if at is not None else None,
        count_of=read_selector(count_of) if count_of is not None else None,
        path=table.path,
    )
    table.finish()
    return checkpoint


def _expect(table: Table) -> int | str | None:
    value = table.raw("expect")
    if (
        value is None
        or isinstance(value, str)
        or (isinstance(value, int) and not isinstance(value, bool))
    ):
        return value
    raise table.error("expect", "must be a string or an integer: what the trace shows")


def trace_value(event: Event, path: str) -> Any:
    if path in EVENT_FIELDS:
        return EVENT_FIELDS[path](event)
    found, value = data_value(event.data, path.removeprefix("data."))
    if not found:
        raise ValueError(f"the event at step {event.seq} ({event.summary}) has no {path}")
    return value


def verify_checkpoint(checkpoint: Checkpoint, recording: Recording) -> None:
    """`ValueError` when the stated answer is not what the trace shows."""
    if checkpoint.count_of is not None:
        shown: Any = len(matching(checkpoint.count_of, recording))
        where = f"{shown} events match 'count_of'"
    else:
        assert checkpoint.from_trace is not None
        event = select(checkpoint.at or checkpoint.before, recording)
        shown = trace_value(event, checkpoint.from_trace)
        where = f"step {event.seq} ({event.summary}) has {checkpoint.from_trace} = {shown!r}"
        asked = select(checkpoint.before, recording).seq
        if event.seq < asked:
            raise ValueError(
                f"the answer is on show at step {event.seq} ({event.summary}), before the"
                f" question stops the learner at step {asked}: ask it at step {event.seq} or"
                " earlier"
            )
    expected = checkpoint.answer if checkpoint.expect is None else checkpoint.expect
    if isinstance(expected, int):
        right = isinstance(shown, int) and not isinstance(shown, bool) and shown == expected
    else:
        right = normalise(str(shown)) == normalise(expected)
    if not right:
        stated = f"the answer {checkpoint.answer!r}"
        if checkpoint.expect is not None:
            stated += f" (expect {checkpoint.expect!r})"
        raise ValueError(f"{stated} is not what the trace shows: {where}")
