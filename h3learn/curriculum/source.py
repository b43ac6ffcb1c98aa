"""Reading a TOML file strictly, with every error naming the file and the line.

Lessons and RFC annotations are written by hand, so every mistake must be easy to find:
an unknown key, a wrong type, a missing value, a reference to nothing. Python's tomllib
parses TOML but keeps no positions, so `Locator` finds them in the text itself: it walks
the lines once, follows the table headers (``[scenario.client]``, the third ``[[note]]``),
skips multi-line strings and arrays, and remembers where each key is written. An error
about ``note[2].at`` then points at the line of ``at`` inside the third ``[[note]]``.

`Table` wraps one parsed table and reads its keys with their types checked
(``table.text("title")``, ``table.integer("nth", default=1)``) and `Table.finish` refuses
the keys nobody read, so a misspelt key is an error, not silently ignored.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A path into the parsed document: keys, and indexes into arrays (of tables).
Path_ = tuple[str | int, ...]

_ARRAY_HEADER = re.compile(r"\s*\[\[\s*([^\]]+?)\s*\]\]")
_TABLE_HEADER = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]")
_KEY = re.compile(r"""\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)\s*(\.[^=]*)?=\s*(.*)""")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')


class SourceError(ValueError):
    """A mistake in a lesson or annotation file: the file, the line, and what is wrong."""

    def __init__(self, file: str, line: int, message: str) -> None:
        super().__init__(f"{file}:{line}: {message}")
        self.file = file
        self.line = line
        self.message = message


def describe_path(path: Path_) -> str:
    """``("note", 2, "at")`` -> ``note 3: 'at'`` (tables counted from 1, as a reader does)."""
    parts: list[str] = []
    for index, piece in enumerate(path):
        if isinstance(piece, int):
            if parts and index > 0 and isinstance(path[index - 1], str):
                parts[-1] = f"{parts[-1]} {piece + 1}"
            else:
                parts.append(f"item {piece + 1}")
        else:
            parts.append(repr(piece) if index == len(path) - 1 and len(path) > 1 else piece)
    return ": ".join(parts) if parts else "the file"


def _unquote(key: str) -> str:
    return key[1:-1] if key[:1] in "\"'" else key


@dataclass
class Locator:
    """Where each table and key of a TOML text is written (1-based line numbers)."""

    text: str
    lines: dict[Path_, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._scan()

    def line(self, path: Path_) -> int:
        """The line of ``path``, or of the nearest enclosing table or key that is known."""
        for end in range(len(path), 0, -1):
            found = self.lines.get(tuple(path[:end]))
            if found is not None:
                return found
        return 1

    def _scan(self) -> None:
        current: Path_ = ()
        counts: dict[Path_, int] = {}
        lines = self.text.splitlines()
        number = 0
        while number < len(lines):
            text = lines[number]
            number += 1
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            header = _ARRAY_HEADER.match(text)
            if header:
                base = self._resolve(header.group(1), counts, last_is_array=True)
                index = counts.get(base, -1) + 1
                counts[base] = index
                current = (*base, index)
                self.lines.setdefault(current, number)
                continue
            header = _TABLE_HEADER.match(text)
            if header and not _KEY.match(text):
                current = self._resolve(header.group(1), counts)
                self.lines.setdefault(current, number)
                continue
            key = _KEY.match(text)
            if not key:
                continue
            path = (*current, _unquote(key.group(1)))
            self.lines.setdefault(path, number)
            number = self._skip_value(path, key.group(3), lines, number)

    def _resolve(self, dotted: str, counts: dict[Path_, int], last_is_array: bool = False) -> Path_:
        """``scenario.client`` -> its path; a segment naming an array of tables takes its latest.

        For an ``[[array]]`` header the last segment is the array itself (its new index is
        counted by the caller).
        """
        segments = [_unquote(part.strip()) for part in dotted.split(".")]
        path: Path_ = ()
        for position, segment in enumerate(segments):
            path = (*path, segment)
            final = position == len(segments) - 1
            if path in counts and not (final and last_is_array):
                path = (*path, counts[path])
        return path

    def _skip_value(self, path: Path_, value: str, lines: list[str], number: int) -> int:
        """Step over a value spanning several lines; note where each array item starts."""
        for quote in ('"""', "'''"):
            if value.startswith(quote) and value.count(quote) == 1:
                while number < len(lines) and quote not in lines[number]:
                    number += 1
                return number + 1
        if not value.startswith("["):
            return number
        depth = _bracket_depth(value)
        item = 0
        while depth > 0 and number < len(lines):
            text = lines[number]
            number += 1
            stripped = text.strip()
            if depth == 1 and (stripped[:1] in "[{\"'" or stripped[:1].isdigit()):
                self.lines.setdefault((*path, item), number)
                item += 1
            depth += _bracket_depth(text)
        return number


def _bracket_depth(text: str) -> int:
    """Net opening brackets on a line, strings and comments left out."""
    bare = _STRING.sub("", text).split("#", 1)[0]
    return bare.count("[") + bare.count("{") - bare.count("]") - bare.count("}")


@dataclass
class Document:
    """A parsed TOML file and the positions of what it says."""

    file: str
    data: dict[str, Any]
    locator: Locator

    @classmethod
    def read(cls, path: Path, display: str | None = None) -> Document:
        name = display or str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise SourceError(name, 1, f"not UTF-8 text ({error.reason})") from None
        return cls.parse(text, name)

    @classmethod
    def parse(cls, text: str, file: str) -> Document:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            match = re.search(r"line (\d+)", str(error))
            line = int(match.group(1)) if match else 1
            raise SourceError(file, line, f"not valid TOML: {error}") from None
        return cls(file, data, Locator(text))

    def error(self, path: Path_, message: str) -> SourceError:
        return SourceError(self.file, self.locator.line(path), f"{describe_path(path)}: {message}")

    def root(self) -> Table:
        return Table(self, (), self.data)


_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", list: "a list"}


@dataclass
class Table:
    """One table of a document, read key by key with types checked (see the module docstring)."""

    document: Document
    path: Path_
    data: dict[str, Any]
    _read: set[str] = field(default_factory=set)

    def error(self, key: str | int | None, message: str) -> SourceError:
        path = self.path if key is None else (*self.path, key)
        return self.document.error(path, message)

    def has(self, key: str) -> bool:
        return key in self.data

    def _get(self, key: str, kind: type, required: bool, default: Any) -> Any:
        self._read.add(key)
        if key not in self.data:
            if required:
                raise self.error(None, f"{key!r} is missing")
            return default
        value = self.data[key]
        # bool is an int in Python; TOML keeps them apart, and so do we.
        wrong = not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        if wrong:
            raise self.error(key, f"must be {_TYPE_NAMES[kind]}, not {_toml_type(value)}")
        return value

    def text(self, key: str, default: str | None = None, *, required: bool = False) -> Any:
        return self._get(key, str, required, default)

    def required_text(self, key: str) -> str:
        value: str = self._get(key, str, True, None)
        if not value.strip():
            raise self.error(key, "must not be empty")
        return value

    def integer(self, key: str, default: int | None = None, *, required: bool = False) -> Any:
        return self._get(key, int, required, default)

    def flag(self, key: str, default: bool) -> bool:
        value: bool = self._get(key, bool, False, default)
        return value

    def raw(self, key: str) -> Any:
        """A value of any type (the caller checks it), or None when absent."""
        self._read.add(key)
        return self.data.get(key)

    def texts(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        values = self._get(key, list, False, None)
        if values is None:
            return default
        for index, value in enumerate(values):
            if not isinstance(value, str):
                raise self.error(key, f"item {index + 1} must be a string, not {_toml_type(value)}")
        return tuple(values)

    def table(self, key: str, *, required: bool = False) -> Table | None:
        self._read.add(key)
        if key not in self.data:
            if required:
                raise self.error(None, f"{key!r} is missing")
            return None
        value = self.data[key]
        if not isinstance(value, dict):
            raise self.error(key, f"must be a table, not {_toml_type(value)}")
        return Table(self.document, (*self.path, key), value)

    def tables(self, key: str) -> Iterator[Table]:
        """The tables of an array of tables (``[[note]]``), in order."""
        self._read.add(key)
        values = self.data.get(key, [])
        if not isinstance(values, list):
            raise self.error(key, f"must be written as [[{key}]] tables, not {_toml_type(values)}")
        for index, value in enumerate(values):
            if not isinstance(value, dict):
                raise self.error(key, f"item {index + 1} must be a table, not {_toml_type(value)}")
            yield Table(self.document, (*self.path, key, index), value)

    def child(self, key: str | int, value: dict[str, Any]) -> Table:
        return Table(self.document, (*self.path, key), value)

    def finish(self, allowed_hint: str = "") -> None:
        """Refuse every key that was not read: a misspelt or unknown key is an error."""
        for key in self.data:
            if key not in self._read:
                known = ", ".join(sorted(self._read))
                hint = f" (known here: {known})" if known else ""
                raise self.error(key, f"unknown key{hint}{allowed_hint}")


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"[:80]
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__
