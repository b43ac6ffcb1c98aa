"""Questions put to the class: chosen and typed answers, how they are counted, and the
lesson checkpoints behind them.

A question is answered by choosing one of its options ("choice") or by typing a short
answer ("number", "text"). A student's answer is kept as a *key*, so that answers that
mean the same are counted as one:

    kind     the key                                  e.g.
    choice   the option's index                       option 2         -> "2"
    number   the whole number, written in decimal     " 0x39 ", "57"   -> "57"
    text     without case, spacing or a final stop    "The  QPACK.  "  -> "the qpack"

These are the readings a lesson's checkpoint uses when it checks a learner's answer
(h3learn/curriculum/checkpoints.py), so the class's spread groups answers the way the
lesson judges them. The teacher sees that spread as the answers arrive: the count of each
option, or for typed answers the `TOP_ANSWERS` most given ones and how many different
answers there were. Nobody is sent who gave which answer.

A lesson's predict checkpoint is asked by its id alone (`LessonCheckpoints`): the server
takes the question, its kind and its choices from the lesson the room is on, and at the
reveal the answer and its explanation, and it judges every distinct answer the class gave.
The teacher's page never supplies the answer, and no page sees it before the reveal.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from h3learn.curriculum.catalogue import Curriculum
from h3learn.curriculum.checkpoints import Checkpoint, normalise, parse_number
from h3learn.curriculum.source import SourceError
from h3learn.web.classroom.protocol import Answer, RoomError, describe
from h3learn.web.classroom.rooms import Question
from h3learn.web.markdown import render

#: The typed answers the teacher is shown by name, most given first; the rest are counted.
TOP_ANSWERS = 8


def answer_key(question: Question, answer: Answer) -> str:
    """The key ``answer`` is counted under, or `RoomError` if it does not fit ``question``."""
    if question.kind == "choice":
        if answer.option is None:
            raise RoomError("answer: this question is answered by choosing: send 'option'")
        if answer.option >= len(question.options):
            raise RoomError(f"answer: 'option' must be below {len(question.options)}")
        return str(answer.option)
    if answer.text is None:
        raise RoomError("answer: this question takes a typed answer: send 'text'")
    if question.kind == "number":
        number = parse_number(answer.text)
        if number is None:
            raise RoomError(
                f"answer: this question takes a whole number (like 57 or 0x39), "
                f"not {describe(answer.text)}"
            )
        return str(number)
    key = normalise(answer.text)
    if not key:
        raise RoomError("answer: 'text' holds nothing but spaces and full stops")
    return key


def tally(question: Question, answers: Counter[str]) -> dict[str, Any]:
    """The spread of ``answers`` (counts per key) as pages are sent it."""
    if question.kind == "choice":
        counts = [answers.get(str(index), 0) for index in range(len(question.options))]
        return {"id": question.id, "counts": counts, "answered": sum(counts)}
    ranked = sorted(answers.items(), key=lambda item: (-item[1], item[0]))
    return {
        "id": question.id,
        "answered": sum(answers.values()),
        "top": [[key, count] for key, count in ranked[:TOP_ANSWERS]],
        "distinct": len(ranked),
    }


class LessonCheckpoints:
    """The curriculum's checkpoints as room questions (see the module docstring)."""

    def __init__(self, curriculum: Curriculum) -> None:
        self.curriculum = curriculum

    def _find(self, lesson_id: str, checkpoint_id: str) -> tuple[Checkpoint, int] | None:
        try:
            return self.curriculum.recorded(lesson_id).checkpoint(checkpoint_id)
        except SourceError as error:
            raise RoomError(f"lesson {lesson_id!r} cannot be recorded: {error}", 500) from None

    def question(self, trace: str, checkpoint_id: str) -> Question:
        """Checkpoint ``checkpoint_id`` of the lesson the room shows (``trace``), unanswered."""
        lesson = self.curriculum.get(trace)
        if lesson is None:
            raise RoomError(
                f"ask: the class is not on a lesson (it shows {trace!r}), and checkpoints "
                "belong to lessons"
            )
        found = self._find(lesson.id, checkpoint_id)
        if found is None:
            raise RoomError(f"ask: lesson {lesson.id!r} has no checkpoint {checkpoint_id!r}", 404)
        checkpoint, step = found
        return Question(
            id=checkpoint.id,
            prompt=checkpoint.question.strip(),
            options=checkpoint.choices,
            kind=checkpoint.kind,
            prompt_html=render(checkpoint.question),
            lesson=lesson.id,
            step=step,
        )

    def reveal(self, question: Question, answers: Counter[str]) -> Question:
        """``question`` revealed: the lesson's answer and explanation, the answers judged."""
        assert question.lesson is not None
        found = self._find(question.lesson, question.id)
        if found is None:
            raise RoomError(f"reveal: lesson {question.lesson!r} no longer has {question.id!r}")
        checkpoint = found[0]
        answer = str(checkpoint.answer)
        if question.kind == "choice":
            correct: int | None = checkpoint.choices.index(answer)
            right: tuple[str, ...] = ()
        else:
            correct = None
            right = tuple(sorted(key for key in answers if checkpoint.is_correct(key)))
        return replace(
            question,
            revealed=True,
            correct=correct,
            answer=answer,
            explain_html=render(checkpoint.explain),
            right=right,
        )
