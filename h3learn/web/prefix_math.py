"""RFC 9204 §4.5.1, §3.2.5 and §3.2.6 written out for one field section, as a learner would.

A field section's prefix carries the Required Insert Count modulo 2 * MaxEntries (§4.5.1.1)
and the Base as a signed distance from it (§4.5.1.2); its field lines refer to the dynamic
table by indexes relative to that Base (§3.2.5) or after it (§3.2.6). The byte view shows
the numbers on the wire; this module shows the arithmetic that turns them into the
Required Insert Count, the Base and each absolute index, with the values the trace
recorded (``data.prefix`` and ``data.field_lines[].absolute_index`` of a
``headers_encoded`` or ``headers_decoded`` event). Nothing is decoded from the bytes
here: every input is a number the encoder or decoder recorded. Should a recorded result
differ from the arithmetic, both are shown, since a trace may come from elsewhere.

The answer is ``{"title", "lines": [{"text", "rfc"}]}``: one sentence per step of the
calculation, each with the section it follows (a link, see `present.rfc_link`).
"""

from __future__ import annotations

from typing import Any

#: RFC 9204 §3.2.1: an entry's size counts 32 bytes of overhead, so a table of capacity C
#: holds at most floor(C / 32) entries (MaxEntries, §4.5.1.1).
ENTRY_OVERHEAD = 32

EVENTS = frozenset({"headers_encoded", "headers_decoded"})


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def section_arithmetic(name: str, data: dict[str, Any]) -> dict[str, Any] | None:
    """The worked calculation for a headers_encoded / headers_decoded event, else None."""
    prefix = data.get("prefix")
    if name not in EVENTS or not isinstance(prefix, dict):
        return None
    encoded = _int(prefix.get("encoded_insert_count"))
    required = _int(prefix.get("required_insert_count"))
    max_entries = _int(prefix.get("max_entries"))
    delta_base = _int(prefix.get("delta_base"))
    base = _int(prefix.get("base"))
    sign = prefix.get("sign")
    if encoded is None or required is None or delta_base is None or not isinstance(sign, bool):
        return None
    lines: list[tuple[str, str]] = []
    if name == "headers_encoded":
        lines += _encoding(required, encoded, max_entries)
    else:
        lines += _decoding(encoded, required, max_entries, _int(prefix.get("total_inserts")))
    lines += _base(required, sign, delta_base, base)
    if base is not None and required > 0:
        lines += _indexes(data.get("field_lines"), base)
    return {
        "title": "Required Insert Count, Base and absolute indexes, worked out",
        "lines": [{"text": text, "rfc": rfc} for text, rfc in lines],
    }


def _full_range(max_entries: int | None) -> list[tuple[str, str]]:
    if max_entries is None:
        return []
    return [
        (
            f"MaxEntries = floor(MaxTableCapacity / {ENTRY_OVERHEAD}) = {max_entries}, "
            f"so FullRange = 2 × MaxEntries = {2 * max_entries}.",
            "9204#4.5.1.1",
        )
    ]


def _encoding(required: int, encoded: int, max_entries: int | None) -> list[tuple[str, str]]:
    """§4.5.1.1, the encoder's side: EncInsertCount = (ReqInsertCount mod FullRange) + 1."""
    if required == 0:
        return [
            (
                "Required Insert Count 0: the section refers to no dynamic entry, so the "
                f"Encoded Insert Count is 0 (on the wire: {encoded}).",
                "9204#4.5.1.1",
            )
        ]
    lines = _full_range(max_entries)
    if max_entries:
        full_range = 2 * max_entries
        result = required % full_range + 1
        text = (
            f"Encoded Insert Count = (ReqInsertCount mod FullRange) + 1 = "
            f"({required} mod {full_range}) + 1 = {result}"
        )
        text += "." if result == encoded else f"; the trace records {encoded}."
        lines.append((text, "9204#4.5.1.1"))
    return lines


def _decoding(
    encoded: int, required: int, max_entries: int | None, total_inserts: int | None
) -> list[tuple[str, str]]:
    """§4.5.1.1, the decoder's side: undo the modulo with the inserts it has received."""
    if encoded == 0:
        return [
            (
                "Encoded Insert Count 0: the Required Insert Count is 0, the section refers "
                "to no dynamic entry.",
                "9204#4.5.1.1",
            )
        ]
    lines = _full_range(max_entries)
    if not max_entries or total_inserts is None:
        lines.append((f"Required Insert Count (as recorded) = {required}.", "9204#4.5.1.1"))
        return lines
    full_range = 2 * max_entries
    max_value = total_inserts + max_entries
    max_wrapped = max_value // full_range * full_range
    result = max_wrapped + encoded - 1
    lines += [
        (
            f"MaxValue = TotalNumberOfInserts + MaxEntries = {total_inserts} + {max_entries}"
            f" = {max_value}.",
            "9204#4.5.1.1",
        ),
        (
            f"MaxWrapped = floor(MaxValue / FullRange) × FullRange = floor({max_value} / "
            f"{full_range}) × {full_range} = {max_wrapped}.",
            "9204#4.5.1.1",
        ),
        (
            f"ReqInsertCount = MaxWrapped + EncodedInsertCount − 1 = {max_wrapped} + "
            f"{encoded} − 1 = {result}.",
            "9204#4.5.1.1",
        ),
    ]
    if result > max_value:
        lines.append(
            (
                f"{result} is more than MaxValue, so it wrapped: ReqInsertCount − FullRange = "
                f"{result} − {full_range} = {result - full_range}.",
                "9204#4.5.1.1",
            )
        )
        result -= full_range
    if result != required:
        lines.append((f"The trace records a Required Insert Count of {required}.", "9204#4.5.1.1"))
    return lines


def _base(required: int, sign: bool, delta_base: int, base: int | None) -> list[tuple[str, str]]:
    """§4.5.1.2: the Base from the sign bit and Delta Base."""
    if sign:
        result = required - delta_base - 1
        text = (
            f"S = 1: Base = ReqInsertCount − DeltaBase − 1 = {required} − {delta_base} − 1"
            f" = {result}"
        )
    else:
        result = required + delta_base
        text = f"S = 0: Base = ReqInsertCount + DeltaBase = {required} + {delta_base} = {result}"
    text += "." if base is None or base == result else f"; the trace records {base}."
    return [(text, "9204#4.5.1.2")]


def _indexes(field_lines: Any, base: int) -> list[tuple[str, str]]:
    """§3.2.5 and §3.2.6: each dynamic reference's absolute index."""
    lines: list[tuple[str, str]] = []
    if not isinstance(field_lines, list):
        return lines
    for number, line in enumerate(field_lines, start=1):
        if not isinstance(line, dict) or line.get("table_type") != "dynamic":
            continue
        index = _int(line.get("index", line.get("name_index")))
        if index is None:
            continue
        what = "its name from dynamic entry" if "name_index" in line else "dynamic entry"
        label = f"Field line {number} ({line.get('name', '?')})"
        if line.get("is_post_base"):
            result = base + index
            text = f"{label}: post-base index {index} → absolute = Base + {index} = {result}"
            rfc = "9204#3.2.6"
        else:
            result = base - 1 - index
            text = (
                f"{label}: relative index {index} → absolute = Base − 1 − {index} = "
                f"{base} − 1 − {index} = {result}"
            )
            rfc = "9204#3.2.5"
        recorded = _int(line.get("absolute_index"))
        text += f" ({what} {result})"
        if recorded is not None and recorded != result:
            text += f"; the trace records {recorded}"
        lines.append((text + ".", rfc))
    return lines
