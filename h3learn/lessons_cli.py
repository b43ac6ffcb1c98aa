"""``h3learn lessons`` and ``h3learn rfc``: check and record lessons, and the RFC coverage.

    h3learn lessons check [DIR]                     every lesson and annotation in DIR
                                                    (default: the lessons h3learn carries)
    h3learn lessons record ID -o trace.json [--lessons-dir DIR]
                    [--set client.qpack_max_table_capacity=0 ...]
    h3learn rfc coverage [--lessons-dir DIR] [--goal]

``check`` records every lesson and reports every mistake with its file and line (exit
status 1 if there is one). ``record`` writes a lesson's trace, byte for byte the same each
time; ``--set SIDE.KEY=VALUE`` reruns it with a setting changed (what-if: a table capacity
of 0, 256 or 4096, blocked streams 0 or 100, Huffman on or off; docs/lessons.md).
``coverage`` lists the sections of RFC 9114 and RFC 9204 that no lesson step demonstrates,
then a summary; ``--goal`` lists only the normative sections of RFC 9114 §4-§8 and RFC 9204
§2-§4, and fails while any is left.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from h3learn.cli_arguments import help_description
from h3learn.command_error import CommandError
from h3learn.curriculum.catalogue import Curriculum, check_folder, default_lessons_dir
from h3learn.curriculum.coverage import coverage, demonstrations
from h3learn.curriculum.lesson import check_overrides, record_lesson
from h3learn.curriculum.rfc_toc import label
from h3learn.curriculum.scenario import Overrides
from h3learn.curriculum.source import SourceError
from h3learn.trace.store import write_trace

LESSONS_DIR_HELP = "the folder of lessons (default: the lessons h3learn carries)"


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    lessons = subparsers.add_parser(
        "lessons",
        help="check lessons, or record one as a trace",
        description=help_description(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = lessons.add_subparsers(dest="lessons_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="check every lesson of a folder")
    check.add_argument("dir", nargs="?", type=Path, default=None, help="the lessons folder")
    check.set_defaults(run=run_check)
    record = actions.add_parser("record", help="write one lesson's trace")
    record.add_argument("id", help="the lesson id: its file name without .toml")
    record.add_argument("-o", "--output", required=True, type=Path, help="the trace to write")
    record.add_argument(
        "--lessons-dir", type=Path, default=None, help=LESSONS_DIR_HELP, metavar="DIR"
    )
    record.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SIDE.KEY=VALUE",
        help="what-if: change one side's setting (repeatable)",
    )
    record.set_defaults(run=run_record)


def add_rfc_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    rfc = subparsers.add_parser(
        "rfc",
        help="the annotated RFCs: coverage by lessons",
        description=help_description(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rfc_actions = rfc.add_subparsers(dest="rfc_command", metavar="ACTION", required=True)
    report = rfc_actions.add_parser("coverage", help="sections no lesson demonstrates")
    report.add_argument(
        "--lessons-dir", type=Path, default=None, help=LESSONS_DIR_HELP, metavar="DIR"
    )
    report.add_argument(
        "--goal", action="store_true", help="only the goal: normative §4-§8 / §2-§4"
    )
    report.set_defaults(run=run_coverage)


def _folder(path: Path | None) -> Path:
    folder = path if path is not None else default_lessons_dir()
    if not folder.is_dir():
        raise CommandError(f"{folder}: no such folder of lessons")
    return folder


def run_check(args: argparse.Namespace) -> int:
    folder = _folder(args.dir)
    report = check_folder(folder)
    for error in report.errors:
        print(error)
    lessons = len(report.lessons)
    steps = sum(len(r.events) for r in report.lessons)
    notes = sum(len(r.lesson.notes) for r in report.lessons)
    checkpoints = sum(len(r.lesson.checkpoints) for r in report.lessons)
    sections = len(report.annotations.by_section)
    status = f"{len(report.errors)} error(s)" if report.errors else "all good"
    print(
        f"{folder}: {lessons} lesson(s) recorded ({steps} steps, {notes} notes,"
        f" {checkpoints} checkpoints), {sections} annotated section(s): {status}"
    )
    return 1 if report.errors else 0


def parse_overrides(settings: list[str]) -> Overrides:
    """``["client.huffman=false", "server.qpack_blocked_streams=0"]`` -> overrides."""
    overrides: Overrides = {}
    for item in settings:
        key, equals, text = item.partition("=")
        side, dot, name = key.partition(".")
        if not equals or not dot:
            raise CommandError(f"--set {item!r}: write SIDE.KEY=VALUE, e.g. client.huffman=false")
        overrides.setdefault(side.strip(), {})[name.strip()] = _value(text.strip())
    try:
        check_overrides(overrides)
    except ValueError as error:
        raise CommandError(f"--set: {error}") from None
    return overrides


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def run_record(args: argparse.Namespace) -> int:
    folder = _folder(args.lessons_dir)
    overrides = parse_overrides(args.set)
    try:
        curriculum = Curriculum.open(folder)
        lesson = curriculum.get(args.id)
        if lesson is None:
            known = ", ".join(curriculum.lessons)
            raise CommandError(f"no lesson {args.id!r} in {folder} (there are: {known})")
        try:
            check_overrides(overrides, lesson.scenario)
        except ValueError as error:
            raise CommandError(f"--set: {error}") from None
        recorded = record_lesson(lesson, overrides, strict=not overrides)
    except SourceError as error:
        raise CommandError(str(error)) from None
    trace = recorded.trace()
    try:
        write_trace(args.output, trace.title, trace.events, trace.meta, created=trace.created)
    except OSError as error:
        raise CommandError(f"cannot write {args.output}: {error.strerror or error}") from None
    print(f"{args.output}: {trace.title}, {len(trace.events)} steps")
    return 0


def run_coverage(args: argparse.Namespace) -> int:
    folder = _folder(args.lessons_dir)
    try:
        curriculum = Curriculum.open(folder)
        recorded = [curriculum.recorded(lesson_id) for lesson_id in curriculum.lessons]
    except SourceError as error:
        raise CommandError(str(error)) from None
    lines = coverage(demonstrations(recorded), curriculum.annotations)
    if args.goal:
        lines = [line for line in lines if line.in_goal and line.normative]
    missing = [line for line in lines if not line.steps]
    for line in missing:
        marks = "normative" if line.normative else "informative"
        goal = ", curriculum goal" if line.in_goal else ""
        print(f"not demonstrated: {label(line.section)} {line.title} ({marks}{goal})")
    for rfc, parts in (("9114", "§4-§8"), ("9204", "§2-§4")):
        goal_lines = [
            line
            for line in lines
            if line.section.startswith(f"{rfc}#") and line.in_goal and line.normative
        ]
        shown = sum(1 for line in goal_lines if line.steps)
        every = [line for line in lines if line.section.startswith(f"{rfc}#")]
        print(
            f"RFC {rfc}: {sum(1 for line in every if line.steps)} of {len(every)} sections"
            f" demonstrated; goal {parts}: {shown} of {len(goal_lines)} normative sections"
        )
    print(f"{len(curriculum.lessons)} lesson(s), {len(missing)} section(s) not demonstrated")
    return 1 if args.goal and missing else 0
