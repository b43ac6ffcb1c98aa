"""A broken lesson or annotation file gives one clear error naming the file and the line.

tomllib keeps no positions; `Locator` finds them (the Nth ``[[note]]``, a key inside it).
Each test writes a small file with one mistake and checks the message and the line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from h3learn.cli import main
from h3learn.curriculum.annotations import load_annotations
from h3learn.curriculum.catalogue import Curriculum, check_folder
from h3learn.curriculum.lesson import load_lesson, record_lesson, verify_lesson
from h3learn.curriculum.source import SourceError

GOOD = """\
title = "A tiny lesson"
summary = "One GET."
goals = ["See one request."]
introduction = "Text."

[[action]]
do = "request"
label = "page"

[[action]]
do = "respond"
to = "page"
body = "hi"

[[note]]
at = { endpoint = "server", event = "headers_decoded", stream = "page" }
rfc = ["9204#4.5"]
text = "The request arrives."

[[checkpoint]]
before = { endpoint = "server", event = "headers_encoded", stream = "page" }
kind = "number"
question = "Required Insert Count?"
answer = 0
from_trace = "data.prefix.required_insert_count"
explain = "No table."
"""


def write(tmp_path: Path, text: str, name: str = "01-tiny.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str) -> SourceError:
    path = write(tmp_path, text)
    with pytest.raises(SourceError) as caught:
        verify_lesson(load_lesson(path, path.name))
    return caught.value


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    lines = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    return lines[occurrence - 1]


def test_the_good_lesson_passes(tmp_path: Path) -> None:
    recorded = verify_lesson(load_lesson(write(tmp_path, GOOD)))
    assert recorded.note_steps[0] is not None


def test_an_unknown_key_names_its_line(tmp_path: Path) -> None:
    text = GOOD.replace('text = "The request arrives."', 'text = "x"\ncolour = "red"')
    error = error_of(tmp_path, text)
    assert error.file == "01-tiny.toml"
    assert error.line == line_of(text, "colour")
    assert "note 1: 'colour': unknown key" in str(error)
    assert str(error).startswith(f"01-tiny.toml:{error.line}: ")


def test_a_wrong_type_names_the_key(tmp_path: Path) -> None:
    text = GOOD.replace('body = "hi"', "body = 42")
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "body = 42")
    assert "action 2: 'body'" in str(error)


def test_a_selector_that_matches_nothing_says_which_key_emptied_it(tmp_path: Path) -> None:
    text = GOOD + (
        '\n[[note]]\nat = { endpoint = "client", event = "frame_parsed", frame_type = "goaway" }\n'
        'rfc = ["9114#7.2.6"]\ntext = "Never happens."\n'
    )
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "[[note]]", 2) + 1
    assert "note 2: at: 'frame_type': selects nothing" in str(error)
    assert "left before 'frame_type', none after it" in str(error)


def test_a_section_that_does_not_exist(tmp_path: Path) -> None:
    text = GOOD.replace('rfc = ["9204#4.5"]', 'rfc = ["9204#4.5", "9204#4.9"]')
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "9204#4.9")
    assert "there is no section 9204#4.9" in str(error)


def test_a_section_written_another_way(tmp_path: Path) -> None:
    error = error_of(tmp_path, GOOD.replace('"9204#4.5"', '"RFC 9204 §4.5"'))
    assert "is not written like" in str(error)


def test_a_checkpoint_whose_answer_the_trace_contradicts(tmp_path: Path) -> None:
    text = GOOD.replace("answer = 0", "answer = 2")
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "answer = 2")
    assert "checkpoint 1: 'answer'" in str(error)
    assert "required_insert_count = 0" in str(error)


def test_a_checkpoint_asked_after_the_step_that_shows_its_answer(tmp_path: Path) -> None:
    """A predict question must come before the answer is on the screen: here the answer is
    read from the request's headers_encoded, but the question waits for the response's."""
    text = GOOD.replace(
        'from_trace = "data.prefix.required_insert_count"',
        'from_trace = "data.prefix.required_insert_count"\n'
        'at = { endpoint = "client", event = "headers_encoded", stream = "page" }',
    )
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "answer = 0")
    assert "the answer is on show at step" in str(error)
    assert "before the question stops the learner at step" in str(error)


def test_a_checkpoint_without_proof_is_refused(tmp_path: Path) -> None:
    error = error_of(
        tmp_path, GOOD.replace('from_trace = "data.prefix.required_insert_count"\n', "")
    )
    assert "say where the trace shows the answer" in str(error)


def test_an_action_the_protocol_refuses_names_the_action(tmp_path: Path) -> None:
    text = GOOD.replace('do = "respond"\nto = "page"', 'do = "respond"\nto = "nothing"')
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "[[action]]", 2)
    assert "no request or push is labelled 'nothing'" in str(error)


def test_disconnect_on_the_memory_transport_names_the_action(tmp_path: Path) -> None:
    text = GOOD.replace('do = "respond"\nto = "page"\nbody = "hi"', 'do = "disconnect"')
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "[[action]]", 2)
    assert "disconnect needs the QUIC transport" in str(error)


def test_an_unknown_action(tmp_path: Path) -> None:
    error = error_of(tmp_path, GOOD.replace('do = "respond"', 'do = "answer"'))
    assert "unknown action 'answer'" in str(error)


def test_a_bad_violation_table_names_its_key(tmp_path: Path) -> None:
    text = GOOD + (
        '\n[[action]]\ndo = "violate"\nfrom = "client"\non = "client control stream"\n'
        'frame = { type = "settingz" }\nrule = "none"\n'
    )
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "settingz")
    assert "must be one of data, headers, settings" in str(error)


def test_not_valid_toml_gives_tomllibs_line(tmp_path: Path) -> None:
    error = error_of(tmp_path, GOOD + "\nthis is not toml\n")
    assert error.line == line_of(GOOD + "\nthis is not toml\n", "this is not toml")


def test_a_missing_prerequisite(tmp_path: Path) -> None:
    write(tmp_path, GOOD.replace("goals =", 'prerequisites = ["00-nothing"]\ngoals ='))
    report = check_folder(tmp_path)
    assert len(report.errors) == 1
    assert "no lesson '00-nothing'" in str(report.errors[0])
    with pytest.raises(SourceError):
        Curriculum.open(tmp_path)


def test_a_badly_named_lesson_file(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD, "Tiny Lesson.toml")
    with pytest.raises(SourceError, match=r"05-the-dynamic-table\.toml"):
        load_lesson(path)


ANNOTATIONS = """\
rfc = 9204
title = "QPACK: Field Compression for HTTP/3"

[[section]]
id = "4.5.1.1"
title = "Required Insert Count"
normative = true
says = "It says."
why = "Because."
pitfalls = "Mistakes."
"""


def annotation_error(tmp_path: Path, text: str) -> SourceError:
    folder = tmp_path / "rfc"
    folder.mkdir(exist_ok=True)
    (folder / "9204.toml").write_text(text)
    with pytest.raises(SourceError) as caught:
        load_annotations(folder)
    return caught.value


def test_annotations_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "rfc"
    folder.mkdir()
    (folder / "9204.toml").write_text(ANNOTATIONS)
    annotations = load_annotations(folder)
    assert annotations.require("9204#4.5.1.1").says == "It says."
    assert "9204#4.5.1.2" in annotations.missing("9204")
    with pytest.raises(LookupError, match=r'id = "4.5.1.2"|id = .4\.5\.1\.2.'):
        annotations.require("9204#4.5.1.2")


@pytest.mark.parametrize(
    ("change", "needle", "message"),
    [
        (('id = "4.5.1.1"', 'id = "4.5.1.9"'), "4.5.1.9", "RFC 9204 has no section 4.5.1.9"),
        (
            ('title = "Required', 'title = "Required!'),
            "Required!",
            "is titled 'Required Insert Count'",
        ),
        (("normative = true", "normative = true\ncolour = 1"), "colour", "unknown key"),
        (('why = "Because."', 'why = ""'), 'why = ""', "must not be empty"),
        (("normative = true", 'normative = "yes"'), "normative", "must be true or false"),
    ],
)
def test_annotation_mistakes_name_their_line(
    tmp_path: Path, change: tuple[str, str], needle: str, message: str
) -> None:
    text = ANNOTATIONS.replace(*change)
    error = annotation_error(tmp_path, text)
    assert message in str(error)
    assert error.line == line_of(text, needle)
    assert error.file.endswith("9204.toml")


def test_a_section_annotated_twice(tmp_path: Path) -> None:
    text = ANNOTATIONS + "\n" + ANNOTATIONS[ANNOTATIONS.index("[[section]]") :]
    error = annotation_error(tmp_path, text)
    assert error.line == line_of(text, 'id = "4.5.1.1"', 2)
    assert "annotated twice" in str(error)


def test_an_appendix_section_is_known(tmp_path: Path) -> None:
    folder = tmp_path / "rfc"
    folder.mkdir()
    text = ANNOTATIONS.replace('id = "4.5.1.1"', 'id = "B.1"').replace(
        "Required Insert Count", "Literal Field Line with Name Reference"
    )
    (folder / "9204.toml").write_text(text)
    assert load_annotations(folder).get("9204#B.1") is not None


def test_a_repeated_body_is_one_data_frame_of_exactly_that_length(tmp_path: Path) -> None:
    text = GOOD.replace('body = "hi"', 'body = ["hi", { repeat = "abc", length = 20000 }]')
    recorded = verify_lesson(load_lesson(write(tmp_path, text)))
    sent = [
        e
        for e in recorded.events
        if e.name == "frame_created" and e.data["frame"]["frame_type"] == "data"
    ]
    assert [len(e.raw) for e in sent] == [2 + 2, 1 + 4 + 20000]  # RFC 9000 §16: 4-byte Length
    assert sent[1].raw[5:11] == b"abcabc" and sent[1].raw.endswith(b"cab")


@pytest.mark.parametrize(
    ("item", "complaint"),
    [
        ('{ repeat = "é", length = 10 }', "'repeat': must be ASCII text"),
        ('{ repeat = "ab", length = 0 }', "'length': must be between 1 and"),
        ('{ repeat = "ab" }', "'length' is missing"),
        ('{ repeat = "ab", length = 9, times = 2 }', "'times': unknown key"),
        ("3", "item 1 must be a string, or a list of DATA frames"),
    ],
)
def test_a_bad_repeated_body_names_its_key(tmp_path: Path, item: str, complaint: str) -> None:
    text = GOOD.replace('body = "hi"', f"body = [{item}]")
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "body = [")
    assert complaint in str(error)


PARTS = (
    GOOD
    + """
[[action]]
do = "new_connection"
id = "second"
title = "A part over QUIC, with an HTTP/2 setting"
transport = "quic"
client = { huffman = false, extra_settings = [[2, 1]] }
"""
)


def test_a_new_connection_may_change_its_transport_and_settings(tmp_path: Path) -> None:
    recorded = verify_lesson(load_lesson(write(tmp_path, PARTS)))
    start, end = recorded.recording.action_ranges[-1]
    part = recorded.events[start:end]
    assert any(e.name == "handshake_completed" for e in part), "the new part runs QUIC"
    assert not any(
        e.category == "transport" and e.name != "connection_started"
        for e in recorded.events[:start]
    ), "the first part stays in memory"
    (error,) = [e for e in part if e.name == "connection_error" and e.endpoint == "server"]
    assert error.data["code_name"] == "H3_SETTINGS_ERROR"


def test_a_what_if_override_wins_over_a_new_connections_settings(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, PARTS))
    recorded = record_lesson(lesson, {"client": {"extra_settings": []}}, strict=False)
    start, _ = recorded.recording.action_ranges[-1]
    assert not [e for e in recorded.events[start:] if e.name == "connection_error"]


def test_a_new_connection_with_an_unknown_transport_names_its_key(tmp_path: Path) -> None:
    text = PARTS.replace('transport = "quic"', 'transport = "tcp"')
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, 'transport = "tcp"')
    assert "must be one of memory, quic, not 'tcp'" in str(error)


def test_a_new_connection_with_an_unknown_setting_names_its_key(tmp_path: Path) -> None:
    text = PARTS.replace("huffman = false", "hufman = false")
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "hufman")
    assert "unknown setting" in str(error)


def test_a_quic_setting_in_a_memory_scenario_names_its_key(tmp_path: Path) -> None:
    """The memory transport has no flow control: quic_max_stream_data would do nothing."""
    text = GOOD.replace(
        "[[action]]", "[scenario.server]\nquic_max_stream_data = 64\n\n[[action]]", 1
    )
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "quic_max_stream_data")
    assert "needs the QUIC transport" in str(error)


def test_a_new_connection_over_memory_with_a_quic_setting_names_the_action(
    tmp_path: Path,
) -> None:
    text = PARTS.replace(
        'transport = "quic"', 'transport = "memory"\nserver = { quic_max_data = 1000 }'
    )
    error = error_of(tmp_path, text)
    assert error.line == line_of(text, "server = { quic_max_data")
    assert "server.quic_max_data needs the QUIC transport" in str(error)


def test_a_quic_setting_makes_the_server_grant_that_little_credit(tmp_path: Path) -> None:
    """RFC 9000 §4.1: the first limit is the setting; the client sees it raised later."""
    text = PARTS.replace(
        "client = { huffman = false, extra_settings = [[2, 1]] }",
        'server = { quic_max_data = 200 }\n\n[[action]]\ndo = "request"\nlabel = "big"'
        '\nheaders = [["x-long", "' + "v" * 150 + '"]]',
    )
    lesson = load_lesson(write(tmp_path, text))

    def first_connection_limit(overrides: dict[str, dict[str, int]]) -> int:
        recorded = record_lesson(lesson, overrides, strict=False)
        raised = [e for e in recorded.events if e.name == "send_limit_raised"]
        assert raised and raised[0].endpoint == "client" and raised[0].data["frame"] == "MAX_DATA"
        previous: int = raised[0].data["previous"]
        return previous

    assert first_connection_limit({}) == 200
    # A what-if sets it on every connection; the first part, in memory, has no QUIC to set.
    assert first_connection_limit({"server": {"quic_max_data": 180}}) == 180


def test_a_label_selects_only_the_connection_it_was_given_on(tmp_path: Path) -> None:
    """Stream IDs start again on a new connection; a label names its own connection's."""
    text = GOOD + (
        '\n[[action]]\ndo = "new_connection"\ntitle = "Again"\n'
        '\n[[action]]\ndo = "request"\nlabel = "again"\n'
        '\n[[note]]\nat = { endpoint = "client", event = "stream_type_set", stream = "again" }\n'
        'rfc = ["9114#6.1"]\ntext = "The same stream ID, a new connection."\n'
    )
    recorded = verify_lesson(load_lesson(write(tmp_path, text)))
    step = recorded.note_steps[-1]
    assert step is not None
    started = [e.seq for e in recorded.events if e.name == "connection_started"]
    assert started and step > started[0]
    assert recorded.events[step].stream_id == recorded.recording.streams["page"] == 0


# -- lessons check reports every mistake of a lesson (README, docs/lessons.md) -------------

CHECKPOINT = """
[[checkpoint]]
id = "{id}"
before = {{ endpoint = "server", event = "headers_encoded", stream = "page" }}
kind = "number"
question = "Required Insert Count?"
answer = {answer}
from_trace = "data.prefix.required_insert_count"
explain = "No table."
{extra}"""


def checkpoint(checkpoint_id: str, answer: int, extra: str = "") -> str:
    return CHECKPOINT.format(id=checkpoint_id, answer=answer, extra=extra)


def errors_of(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "01-tiny.toml").write_text(text)
    return [str(error) for error in check_folder(tmp_path).errors]


def wrong_answer(text: str, answer: int) -> str:
    """The start of the error a wrong number answer gets: its file, line and rule."""
    line = line_of(text, f"answer = {answer}")
    return f"01-tiny.toml:{line}: checkpoint"


def test_two_wrong_checkpoint_answers_are_both_reported(tmp_path: Path) -> None:
    # The second asks about the request's field section, the first about the response's.
    second = checkpoint("second", 9).replace('endpoint = "server"', 'endpoint = "client"')
    text = GOOD.replace("answer = 0", "answer = 7") + second
    errors = errors_of(tmp_path, text)
    assert len(errors) == 2, errors
    assert wrong_answer(text, 7) in errors[0] and "the answer 7 is not what" in errors[0]
    assert wrong_answer(text, 9) in errors[1] and "the answer 9 is not what" in errors[1]


def test_an_unknown_key_in_a_checkpoint_does_not_hide_the_other_mistakes(
    tmp_path: Path,
) -> None:
    text = GOOD.replace("answer = 0", "answer = 5") + checkpoint("typo", 0, 'hnit = "x"\n')
    errors = errors_of(tmp_path, text)
    assert len(errors) == 2, errors
    assert f"01-tiny.toml:{line_of(text, 'hnit')}: checkpoint 2: 'hnit': unknown key" in errors[0]
    assert wrong_answer(text, 5) in errors[1] and "the answer 5 is not what" in errors[1]


def test_a_refused_variant_is_reported_beside_a_wrong_answer(tmp_path: Path) -> None:
    text = GOOD.replace("answer = 0", "answer = 5")
    text += '\n[[variant]]\nname = "too big"\nclient = { encoder_table_capacity = 300 }\n'
    errors = errors_of(tmp_path, text)
    assert len(errors) == 2, errors
    assert "variant 'too big': client.encoder_table_capacity: 300 is above" in errors[0]
    assert "RFC 9204 §3.2.3" in errors[0]
    assert wrong_answer(text, 5) in errors[1] and "the answer 5 is not what" in errors[1]


def test_a_variant_that_cannot_be_read_hides_neither_the_next_variant_nor_an_answer(
    tmp_path: Path,
) -> None:
    text = GOOD.replace("answer = 0", "answer = 5")
    text += '\n[[variant]]\nname = "unreadable"\nboth = { huffman = "no" }\n'
    text += '\n[[variant]]\nname = "too big"\nclient = { encoder_table_capacity = 300 }\n'
    errors = errors_of(tmp_path, text)
    assert len(errors) == 3, errors
    assert "'huffman': must be true or false, not 'no'" in errors[0]
    assert "variant 'too big': client.encoder_table_capacity: 300 is above" in errors[1]
    assert "the answer 5 is not what" in errors[2]


def test_lessons_check_prints_every_mistake_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = GOOD.replace("answer = 0", "answer = 5") + checkpoint("typo", 0, 'hnit = "x"\n')
    (tmp_path / "01-tiny.toml").write_text(text)
    assert main(["lessons", "check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "2 error(s)" in out and "'hnit': unknown key" in out and "the answer 5" in out
