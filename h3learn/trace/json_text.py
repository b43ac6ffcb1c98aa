"""JSON from untrusted text: the one parser the project reads files and request bodies with.

Python's ``json.loads`` has two limits of its own that it reports as exceptions no caller
expects: arrays and objects nested about a thousand deep exhaust the interpreter's
recursion limit (RecursionError), and an integer of more than 4300 digits is refused by
the int conversion limit (a ValueError that is not a JSONDecodeError). A trace file, a
qlog file or a request body is untrusted input, so `parse_json` turns both, and any text
that is not JSON, into `UnusableJSON`, whose message names the rule that broke.

A value that parses may still be nested too deeply to use: whatever later writes it out
again (``json.dumps``, ``repr``) recurses as deep, from a deeper stack. `check_depth`
refuses values nested more than `MAX_DEPTH` deep; the readers apply it to the parts of a
file that are free-form (a trace's ``meta``, each event's ``data``, a field span's
``value``) and to every request body. The other parts have fixed shapes that the readers
check key by key.
"""

from __future__ import annotations

import json
from typing import Any

#: The deepest nesting of arrays and objects a free-form value may have. h3learn's own
#: events nest five deep; this leaves room for other tools' data and keeps far below
#: Python's recursion limit (1000 frames).
MAX_DEPTH = 64

#: Python refuses to convert integers with more digits than this (sys.int_info).
MAX_DIGITS = 4300


class UnusableJSON(ValueError):
    """Text that is not JSON h3learn can use; the message says which rule it broke."""


class NotJSON(UnusableJSON):
    """Text that is not JSON at all (as opposed to JSON beyond the parser's limits)."""


def parse_json(text: str) -> Any:
    """``json.loads(text)``; raises `UnusableJSON` (never RecursionError) when it cannot."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        # One message already ends with "at" ("Unterminated string starting at").
        said = f"{error.msg} {where}" if error.msg.endswith(" at") else f"{error.msg} at {where}"
        raise NotJSON(f"not JSON: {said}") from None
    except RecursionError:
        raise UnusableJSON(too_deep()) from None
    except ValueError:
        # The only other ValueError json.loads raises: the int conversion limit.
        raise UnusableJSON(
            f"a number with too many digits (more than {MAX_DIGITS}, Python's limit for"
            " converting text to an integer)"
        ) from None


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise `UnusableJSON` when arrays and objects nest more than ``limit`` deep in ``value``.

    One level at a time, without recursion, so that the check itself cannot run out of
    stack; each level is the arrays and objects found inside the one before.
    """
    level = [value] if is_nested(value) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            raise UnusableJSON(too_deep(limit))
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in CONTAINERS
        ]


#: The JSON values that hold others (``json.loads`` makes exactly these two types).
CONTAINERS = (dict, list)


def is_nested(value: Any) -> bool:
    """Whether ``value`` is an array or an object (the only values `check_depth` walks)."""
    return type(value) in CONTAINERS


def too_deep(limit: int = MAX_DEPTH) -> str:
    return f"JSON nested too deeply (arrays and objects more than {limit} levels deep)"


def json_kind(value: Any) -> str:
    """How a JSON value is described in an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
