"""The classroom's Socket.IO messages: what each event must carry, checked before use.

Every payload comes from a browser and is untrusted. Each ``parse_*`` function takes what
Socket.IO delivered (any JSON value, or nothing) and returns a typed message, or raises
`RoomError` with a sentence that names the field and the rule, e.g. ``step: 'step' must
be a whole number, not 'x'``. The handlers (sockets.py) send that sentence back as the
event's answer (``{"error": ...}``); nothing a client sends can stop the server. The
events and their answers are documented in docs/web-api.md, "Classroom".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from h3learn.web.classroom.codes import BadCode, normalize_code
from h3learn.web.classroom.rooms import KINDS, Question

#: Limits on what a question may hold (a checkpoint is a short question), and on an answer.
MAX_OPTIONS = 12
MAX_OPTION_CHARS = 200
MAX_PROMPT_CHARS = 1000
#: A typed answer: a number, a word, a short phrase (``answer: 'text' is longer than 100``).
MAX_ANSWER_CHARS = 100
QUESTION_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
MAX_TOKEN_CHARS = 128
#: The largest move number accepted (JavaScript's largest exact integer).
MAX_MOVE = 2**53 - 1


class RoomError(Exception):
    """A classroom request refused; the message is what the client is told.

    ``status`` says what kind of refusal it is, as an HTTP status (and is one, in the JSON
    API): 400 a malformed or impossible request, 403 not this sender's to do (a student
    driving), 404 an unknown room or trace, 503 the server cannot take it now."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Join:
    code: str
    token: str | None


@dataclass(frozen=True)
class Control:
    """Any teacher event: the room and the token that proves who sends it."""

    code: str
    token: str


@dataclass(frozen=True)
class Step:
    control: Control
    trace: str
    step: int
    move: int


@dataclass(frozen=True)
class Ask:
    """A question of the teacher's own, or a lesson checkpoint named by its id (the
    server reads it from the lesson the room is on)."""

    control: Control
    question: Question | None
    checkpoint: str | None = None


@dataclass(frozen=True)
class Reveal:
    control: Control
    question_id: str
    correct: int | None


@dataclass(frozen=True)
class Answer:
    """A student's answer: the index of an option, or a typed answer (exactly one)."""

    code: str
    question_id: str
    option: int | None
    text: str | None = None


def _object(event: str, payload: Any) -> dict[str, Any]:
    if not isinstance(payload, dict):
        raise RoomError(f"{event}: the message must be a JSON object, not {describe(payload)}")
    return payload


def _text(event: str, payload: dict[str, Any], name: str, limit: int) -> str:
    value = payload.get(name)
    if not isinstance(value, str):
        raise RoomError(f"{event}: {name!r} must be a string, not {describe(value)}")
    if len(value) > limit:
        raise RoomError(f"{event}: {name!r} is longer than {limit} characters")
    return value


def _whole(event: str, payload: dict[str, Any], name: str, high: int = MAX_MOVE) -> int:
    value = payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RoomError(f"{event}: {name!r} must be a whole number, not {describe(value)}")
    if not 0 <= value <= high:
        raise RoomError(f"{event}: {name!r} must be between 0 and {high}, not {value}")
    return value


def _code(event: str, payload: dict[str, Any]) -> str:
    text = _text(event, payload, "code", 32)
    try:
        return normalize_code(text)
    except BadCode as error:
        raise RoomError(f"{event}: {error}") from None


def _question_id(event: str, payload: dict[str, Any], name: str) -> str:
    value = _text(event, payload, name, 64)
    if not QUESTION_ID.fullmatch(value):
        raise RoomError(f"{event}: {name!r} may hold only letters, digits and _ . : -")
    return value


def _control(event: str, payload: Any) -> tuple[dict[str, Any], Control]:
    message = _object(event, payload)
    code = _code(event, message)
    return message, Control(code, _text(event, message, "token", MAX_TOKEN_CHARS))


def parse_join(payload: Any) -> Join:
    message = _object("join", payload)
    code = _code("join", message)
    if message.get("token") is None:
        return Join(code, None)
    return Join(code, _text("join", message, "token", MAX_TOKEN_CHARS))


def parse_step(payload: Any) -> Step:
    message, control = _control("step", payload)
    trace = _text("step", message, "trace", 64)
    return Step(control, trace, _whole("step", message, "step"), _whole("step", message, "move"))


def parse_ask(payload: Any) -> Ask:
    message, control = _control("ask", payload)
    if message.get("checkpoint") is not None:
        return Ask(control, None, _question_id("ask", message, "checkpoint"))
    question = _object("ask", message.get("question"))
    question_id = _question_id("ask", question, "id")
    prompt = _text("ask", question, "prompt", MAX_PROMPT_CHARS)
    kind = question.get("kind", "choice")
    if kind not in KINDS:
        raise RoomError(f"ask: 'kind' must be one of {', '.join(KINDS)}, not {describe(kind)}")
    options = question.get("options", [])
    if kind != "choice":
        if options:
            raise RoomError(f"ask: a {kind} question is answered by typing: it has no 'options'")
        return Ask(control, Question(question_id, prompt, kind=kind))
    if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
        raise RoomError(f"ask: 'options' must be a list of 2 to {MAX_OPTIONS} strings")
    for index, option in enumerate(options):
        if not isinstance(option, str) or not 0 < len(option) <= MAX_OPTION_CHARS:
            raise RoomError(
                f"ask: option {index} must be a string of 1 to {MAX_OPTION_CHARS} characters"
            )
    return Ask(control, Question(question_id, prompt, tuple(options)))


def parse_reveal(payload: Any) -> Reveal:
    message, control = _control("reveal", payload)
    question_id = _question_id("reveal", message, "question")
    correct = None
    if message.get("correct") is not None:
        correct = _whole("reveal", message, "correct", MAX_OPTIONS - 1)
    return Reveal(control, question_id, correct)


def parse_answer(payload: Any) -> Answer:
    """An option's index, or a typed answer of 1 to `MAX_ANSWER_CHARS` characters that is
    not only spaces and holds no control characters (questions.py reads it further)."""
    message = _object("answer", payload)
    code = _code("answer", message)
    question_id = _question_id("answer", message, "question")
    has_option, has_text = message.get("option") is not None, message.get("text") is not None
    if has_option == has_text:
        raise RoomError("answer: send either 'option' (a choice) or 'text' (a typed answer)")
    if has_option:
        return Answer(code, question_id, _whole("answer", message, "option", MAX_OPTIONS - 1))
    text = _text("answer", message, "text", MAX_ANSWER_CHARS)
    if not text.strip():
        raise RoomError("answer: 'text' is empty")
    if any(unicodedata.category(character) == "Cc" for character in text):
        raise RoomError("answer: 'text' may not hold control characters (tabs, line breaks)")
    return Answer(code, question_id, None, text)


def parse_end(payload: Any) -> Control:
    return _control("end", payload)[1]


def describe(value: Any) -> str:
    """A JSON value's kind, for error messages (never the value itself, which may be long)."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return f"the number {value!r}" if abs(value) < 1e15 else "a number"
    if isinstance(value, str):
        return f"{value[:20]!r}" if len(value) <= 20 else "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__
