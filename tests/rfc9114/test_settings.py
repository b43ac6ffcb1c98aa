"""RFC 9114 §7.2.4 and §7.2.4.1: the rules for the settings in a SETTINGS frame.

Each rule is checked on its own (HTTP/2-only identifiers, repeats, 0/1-only settings,
reserved and unknown identifiers); the defaults against §7.2.4.2 and RFC 9204 §5; and the
whole against aioquic's `parse_settings`, which applies the same two RFC 9114 rules.
"""

from __future__ import annotations

import pytest
from aioquic.h3.connection import Setting as AioquicSetting
from aioquic.h3.connection import SettingsError as AioquicSettingsError
from aioquic.h3.connection import encode_settings, parse_settings
from hypothesis import given
from hypothesis import strategies as st

from h3learn.h3.errors import ErrorCode, H3ConnectionError, reserved_value
from h3learn.h3.frames import SettingsFrame
from h3learn.h3.settings import (
    HTTP2_ONLY_SETTINGS,
    SettingId,
    Settings,
    check_settings,
    is_reserved_setting,
    known_setting,
    qlog_setting,
    setting_name,
)
from h3learn.wire.varint import VARINT_MAX

VALUES = st.integers(min_value=0, max_value=VARINT_MAX)
#: Identifiers a receiver ignores: reserved ones and a few unregistered ones.
IGNORED_IDS = st.one_of(
    st.integers(min_value=0, max_value=1000).map(reserved_value),
    st.sampled_from([0x09, 0x2B603742, 0x4D44, 0x3FFF_FFFF_FFFF_FFFF]),
)


def settings_error(pairs: list[tuple[int, int]]) -> H3ConnectionError:
    with pytest.raises(H3ConnectionError) as caught:
        Settings.from_pairs(pairs)
    assert caught.value.code == ErrorCode.H3_SETTINGS_ERROR
    return caught.value


# -- the registry -------------------------------------------------------------------------------


def test_setting_ids_match_the_registries_and_aioquic() -> None:
    """RFC 9114 §11.2.2, RFC 9204 §8.1, RFC 9220 §5, RFC 9297 §5.1."""
    assert {s.name: s.value for s in SettingId} == {
        "QPACK_MAX_TABLE_CAPACITY": 0x01,
        "MAX_FIELD_SECTION_SIZE": 0x06,
        "QPACK_BLOCKED_STREAMS": 0x07,
        "ENABLE_CONNECT_PROTOCOL": 0x08,
        "H3_DATAGRAM": 0x33,
    }
    for setting in SettingId:
        assert AioquicSetting[setting.name].value == setting.value


# -- §7.2.4.2: initial values --------------------------------------------------------------------


def test_before_any_settings_arrive_every_setting_has_its_default() -> None:
    """Capacity 0 and blocked streams 0 (RFC 9204 §5), field sections unlimited (§7.2.4.1)."""
    defaults = Settings()
    assert defaults == Settings.from_pairs([]) == Settings.from_frame(SettingsFrame())
    assert defaults.qpack_max_table_capacity == 0
    assert defaults.qpack_blocked_streams == 0
    assert defaults.max_field_section_size is None
    assert not defaults.enable_connect_protocol and not defaults.h3_datagram


def test_received_settings_replace_the_defaults() -> None:
    frame = SettingsFrame(((0x01, 4096), (0x06, 16384), (0x07, 100), (0x08, 1), (0x33, 1)))
    assert Settings.from_frame(frame) == Settings(
        qpack_max_table_capacity=4096,
        max_field_section_size=16384,
        qpack_blocked_streams=100,
        enable_connect_protocol=True,
        h3_datagram=True,
    )


# -- §7.2.4.1: identifiers reserved from HTTP/2 ---------------------------------------------------


@pytest.mark.parametrize("identifier", [0x02, 0x03, 0x04, 0x05])
def test_an_http2_only_setting_is_h3_settings_error(identifier: int) -> None:
    error = settings_error([(0x01, 100), (identifier, 0)])
    assert error.rfc == "9114#7.2.4.1"
    assert HTTP2_ONLY_SETTINGS[identifier] in str(error)
    assert str(error).startswith("H3_SETTINGS_ERROR (RFC 9114 §7.2.4.1): ")


def test_identifier_zero_is_ignored_because_it_was_never_an_http2_setting() -> None:
    """RFC 9114 §11.2.2 lists 0x00 as reserved, but §7.2.4.1's error covers only HTTP/2's."""
    assert Settings.from_pairs([(0x00, 5)]).ignored == ((0x00, 5),)


# -- §7.2.4: repeated identifiers ---------------------------------------------------------------


@pytest.mark.parametrize("identifier", [0x01, 0x06, 0x21, 0x2B603742])
def test_a_repeated_identifier_is_h3_settings_error(identifier: int) -> None:
    error = settings_error([(identifier, 1), (0x07, 1), (identifier, 1)])
    assert error.rfc == "9114#7.2.4"
    assert "appears twice" in error.rule


# -- RFC 9220 §3 and RFC 9297 §2.1.1: settings that are 0 or 1 -------------------------------------


@pytest.mark.parametrize(
    ("setting", "section"),
    [(SettingId.ENABLE_CONNECT_PROTOCOL, "9220#3"), (SettingId.H3_DATAGRAM, "9297#2.1.1")],
)
@pytest.mark.parametrize("value", [2, 0x3F, VARINT_MAX])
def test_a_boolean_setting_other_than_0_or_1_is_h3_settings_error(
    setting: SettingId, section: str, value: int
) -> None:
    error = settings_error([(setting, value)])
    assert error.rfc == section
    assert setting.name in error.rule


@pytest.mark.parametrize("setting", [SettingId.ENABLE_CONNECT_PROTOCOL, SettingId.H3_DATAGRAM])
def test_a_boolean_setting_of_0_or_1_is_accepted(setting: SettingId) -> None:
    attribute = setting.name.lower()
    assert getattr(Settings.from_pairs([(setting, 1)]), attribute) is True
    assert getattr(Settings.from_pairs([(setting, 0)]), attribute) is False


# -- §7.2.4, §7.2.4.1: reserved and unknown identifiers are ignored --------------------------------


def test_reserved_and_unknown_settings_are_ignored_but_kept_in_order() -> None:
    pairs = [(0x21, 7), (0x01, 64), (0x2B603742, 1), (reserved_value(9), 0)]
    settings = Settings.from_pairs(pairs)
    assert settings.qpack_max_table_capacity == 64
    assert settings.ignored == ((0x21, 7), (0x2B603742, 1), (reserved_value(9), 0))
    assert is_reserved_setting(0x21) and not is_reserved_setting(0x2B603742)
    assert known_setting(0x21) is None


@given(st.lists(st.tuples(IGNORED_IDS, VALUES), unique_by=lambda pair: pair[0], max_size=6))
def test_any_number_of_ignored_settings_changes_nothing_but_the_list(
    ignored: list[tuple[int, int]],
) -> None:
    assert Settings.from_pairs(ignored) == Settings(ignored=tuple(ignored))


# -- Settings <-> pairs ---------------------------------------------------------------------------


@st.composite
def settings_values(draw: st.DrawFn) -> Settings:
    return Settings(
        qpack_max_table_capacity=draw(VALUES),
        max_field_section_size=draw(st.none() | VALUES),
        qpack_blocked_streams=draw(VALUES),
        enable_connect_protocol=draw(st.booleans()),
        h3_datagram=draw(st.booleans()),
        ignored=tuple(
            draw(st.lists(st.tuples(IGNORED_IDS, VALUES), unique_by=lambda p: p[0], max_size=4))
        ),
    )


@given(settings_values())
def test_settings_survive_a_trip_through_the_pairs_they_send(settings: Settings) -> None:
    assert Settings.from_pairs(settings.pairs()) == settings


def test_only_settings_that_differ_from_their_defaults_are_sent() -> None:
    """RFC 9114 §7.2.4.2: everything that differs from the default is included."""
    assert Settings().pairs() == ()
    assert Settings(qpack_blocked_streams=16).pairs() == ((0x07, 16),)


# -- cross-check with aioquic ----------------------------------------------------------------------

#: Identifiers for the differential test: registered ones, HTTP/2-only ones, ignored ones.
#: 0x00 is left out (aioquic rejects it; see the test above) and so are the 0/1 settings,
#: whose values aioquic does not check.
POOL = st.sampled_from([0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x21, 0x40, 0x2B603742])


@given(st.lists(st.tuples(POOL, VALUES), max_size=5))
def test_we_reject_exactly_the_settings_payloads_aioquic_rejects(
    pairs: list[tuple[int, int]],
) -> None:
    payload = b"".join(encode_settings({identifier: value}) for identifier, value in pairs)
    try:
        theirs: dict[int, int] | None = parse_settings(payload)
    except AioquicSettingsError:
        theirs = None
    try:
        ours: Settings | None = Settings.from_pairs(pairs)
    except H3ConnectionError as error:
        assert error.code == ErrorCode.H3_SETTINGS_ERROR
        ours = None
    assert (ours is None) == (theirs is None)
    if ours is not None and theirs is not None:
        assert theirs.get(0x01, 0) == ours.qpack_max_table_capacity
        assert theirs.get(0x07, 0) == ours.qpack_blocked_streams
        assert theirs.get(0x06) == ours.max_field_section_size


# -- display ---------------------------------------------------------------------------------------


def test_describe_lists_every_setting_and_marks_defaults() -> None:
    settings = Settings.from_pairs([(0x01, 4096), (0x07, 16), (0x21, 5)])
    assert settings.describe() == (
        "QPACK_MAX_TABLE_CAPACITY=4096, MAX_FIELD_SECTION_SIZE=unlimited (default), "
        "QPACK_BLOCKED_STREAMS=16, ENABLE_CONNECT_PROTOCOL=0 (default), H3_DATAGRAM=0 (default); "
        "ignored: reserved setting 0x21=5"
    )


def test_setting_names_say_what_kind_of_identifier_it_is() -> None:
    assert setting_name(0x06) == "MAX_FIELD_SECTION_SIZE"
    assert setting_name(0x02) == "SETTINGS_ENABLE_PUSH (HTTP/2 only)"
    assert setting_name(0x40) == "reserved setting 0x40"
    assert setting_name(0x2B603742) == "unknown setting 0x2b603742"


def test_qlog_uses_the_draft_names_and_keeps_unknown_identifiers() -> None:
    """draft-ietf-quic-qlog-h3-events, HTTP3Setting."""
    assert qlog_setting(0x01, 4096) == {"name": "settings_qpack_max_table_capacity", "value": 4096}
    assert qlog_setting(0x33, 1) == {"name": "settings_h3_datagram", "value": 1}
    assert qlog_setting(0x21, 3) == {"name": "reserved", "value": 3}
    assert qlog_setting(0x54, 3) == {"name": "unknown", "name_bytes": 0x54, "value": 3}


def test_qlog_parameters_set_reports_the_effective_values() -> None:
    data = Settings(qpack_max_table_capacity=4096, enable_connect_protocol=True).qlog()
    assert data == {
        "max_table_capacity": 4096,
        "blocked_streams_count": 0,
        "extended_connect": 1,
        "h3_datagram": 0,
    }


def test_check_settings_accepts_a_valid_list_without_building_anything() -> None:
    check_settings([(0x01, 0), (0x21, 1)])
