"""The tables of contents of the RFCs the project cites: section ids, titles, links.

A trace cites sections as ``"9114#7.2.4"`` (docs/events.md); the UI shows them as "RFC 9114
§7.2.4 SETTINGS" with a link to the official text, lessons cite them in their notes, and the
RFC reader lists them in order. Titles are facts of the RFCs (their tables of contents),
kept here as data; what the sections mean, in the project's own words, is in
lessons/rfc/<number>.toml (annotations.py reads it).

RFC 9114 and RFC 9204 are listed whole, appendices included (``"9114#A.2.1"``): an id not
here is not a section of them. Of the other RFCs only the sections the project cites are
listed; an annotation file may add further sections of those (with their titles).
"""

from __future__ import annotations

import re

#: RFCs whose whole table of contents is below: any other id of them is not a section.
COMPLETE_RFCS = frozenset({"9114", "9204"})

#: A section reference: RFC number, "#", then a section ("7.2.4") or appendix ("A", "B.1").
SECTION_REFERENCE = re.compile(r"(?P<rfc>[0-9]{3,5})#(?P<part>[0-9]+(\.[0-9]+)*|[A-Z](\.[0-9]+)*)")

#: "RFC#section" -> title, as the RFCs' tables of contents give them.
TITLES: dict[str, str] = {
    "9114#1": "Introduction",
    "9114#1.1": "Prior Versions of HTTP",
    "9114#1.2": "Delegation to QUIC",
    "9114#2": "HTTP/3 Protocol Overview",
    "9114#2.1": "Document Organization",
    "9114#2.2": "Conventions and Terminology",
    "9114#3": "Connection Setup and Management",
    "9114#3.1": "Discovering an HTTP/3 Endpoint",
    "9114#3.1.1": "HTTP Alternative Services",
    "9114#3.1.2": "Other Schemes",
    "9114#3.2": "Connection Establishment",
    "9114#3.3": "Connection Reuse",
    "9114#4": "Expressing HTTP Semantics in HTTP/3",
    "9114#4.1": "HTTP Message Framing",
    "9114#4.1.1": "Request Cancellation and Rejection",
    "9114#4.1.2": "Malformed Requests and Responses",
    "9114#4.2": "HTTP Fields",
    "9114#4.2.1": "Field Compression",
    "9114#4.2.2": "Header Size Constraints",
    "9114#4.3": "HTTP Control Data",
    "9114#4.3.1": "Request Pseudo-Header Fields",
    "9114#4.3.2": "Response Pseudo-Header Fields",
    "9114#4.4": "The CONNECT Method",
    "9114#4.5": "HTTP Upgrade",
    "9114#4.6": "Server Push",
    "9114#5": "Connection Closure",
    "9114#5.1": "Idle Connections",
    "9114#5.2": "Connection Shutdown",
    "9114#5.3": "Immediate Application Closure",
    "9114#5.4": "Transport Closure",
    "9114#6": "Stream Mapping and Usage",
    "9114#6.1": "Bidirectional Streams",
    "9114#6.2": "Unidirectional Streams",
    "9114#6.2.1": "Control Streams",
    "9114#6.2.2": "Push Streams",
    "9114#6.2.3": "Reserved Stream Types",
    "9114#7": "HTTP Framing Layer",
    "9114#7.1": "Frame Layout",
    "9114#7.2": "Frame Definitions",
    "9114#7.2.1": "DATA",
    "9114#7.2.2": "HEADERS",
    "9114#7.2.3": "CANCEL_PUSH",
    "9114#7.2.4": "SETTINGS",
    "9114#7.2.4.1": "Defined SETTINGS Parameters",
    "9114#7.2.4.2": "Initialization",
    "9114#7.2.5": "PUSH_PROMISE",
    "9114#7.2.6": "GOAWAY",
    "9114#7.2.7": "MAX_PUSH_ID",
    "9114#7.2.8": "Reserved Frame Types",
    "9114#8": "Error Handling",
    "9114#8.1": "HTTP/3 Error Codes",
    "9114#9": "Extensions to HTTP/3",
    "9114#10": "Security Considerations",
    "9114#10.1": "Server Authority",
    "9114#10.2": "Cross-Protocol Attacks",
    "9114#10.3": "Intermediary-Encapsulation Attacks",
    "9114#10.4": "Cacheability of Pushed Responses",
    "9114#10.5": "Denial-of-Service Considerations",
    "9114#10.5.1": "Limits on Field Section Size",
    "9114#10.5.2": "CONNECT Issues",
    "9114#10.6": "Use of Compression",
    "9114#10.7": "Padding and Traffic Analysis",
    "9114#10.8": "Frame Parsing",
    "9114#10.9": "Early Data",
    "9114#10.10": "Migration",
    "9114#10.11": "Privacy Considerations",
    "9114#11": "IANA Considerations",
    "9114#11.1": "Registration of HTTP/3 Identification String",
    "9114#11.2": "New Registries",
    "9114#11.2.1": "Frame Types",
    "9114#11.2.2": "Settings Parameters",
    "9114#11.2.3": "Error Codes",
    "9114#11.2.4": "Stream Types",
    "9114#A": "Considerations for Transitioning from HTTP/2",
    "9114#A.1": "Streams",
    "9114#A.2": "HTTP Frame Types",
    "9114#A.2.1": "Prioritization Differences",
    "9114#A.2.2": "Field Compression Differences",
    "9114#A.2.3": "Flow-Control Differences",
    "9114#A.2.4": "Guidance for New Frame Type Definitions",
    "9114#A.2.5": "Comparison of HTTP/2 and HTTP/3 Frame Types",
    "9114#A.3": "HTTP/2 SETTINGS Parameters",
    "9114#A.4": "HTTP/2 Error Codes",
    "9114#A.4.1": "Mapping between HTTP/2 and HTTP/3 Errors",
    "9204#1": "Introduction",
    "9204#1.1": "Conventions and Definitions",
    "9204#1.2": "Notational Conventions",
    "9204#2": "Compression Process Overview",
    "9204#2.1": "Encoder",
    "9204#2.1.1": "Limits on Dynamic Table Insertions",
    "9204#2.1.1.1": "Avoiding Prohibited Insertions",
    "9204#2.1.2": "Blocked Streams",
    "9204#2.1.3": "Avoiding Flow-Control Deadlocks",
    "9204#2.1.4": "Known Received Count",
    "9204#2.2": "Decoder",
    "9204#2.2.1": "Blocked Decoding",
    "9204#2.2.2": "State Synchronization",
    "9204#2.2.2.1": "Completed Processing of a Field Section",
    "9204#2.2.2.2": "Abandonment of a Stream",
    "9204#2.2.2.3": "New Table Entries",
    "9204#2.2.3": "Invalid References",
    "9204#3": "Reference Tables",
    "9204#3.1": "Static Table",
    "9204#3.2": "Dynamic Table",
    "9204#3.2.1": "Dynamic Table Size",
    "9204#3.2.2": "Dynamic Table Capacity and Eviction",
    "9204#3.2.3": "Maximum Dynamic Table Capacity",
    "9204#3.2.4": "Absolute Indexing",
    "9204#3.2.5": "Relative Indexing",
    "9204#3.2.6": "Post-Base Indexing",
    "9204#4": "Wire Format",
    "9204#4.1": "Primitives",
    "9204#4.1.1": "Prefixed Integers",
    "9204#4.1.2": "String Literals",
    "9204#4.2": "Encoder and Decoder Streams",
    "9204#4.3": "Encoder Instructions",
    "9204#4.3.1": "Set Dynamic Table Capacity",
    "9204#4.3.2": "Insert with Name Reference",
    "9204#4.3.3": "Insert with Literal Name",
    "9204#4.3.4": "Duplicate",
    "9204#4.4": "Decoder Instructions",
    "9204#4.4.1": "Section Acknowledgment",
    "9204#4.4.2": "Stream Cancellation",
    "9204#4.4.3": "Insert Count Increment",
    "9204#4.5": "Field Line Representations",
    "9204#4.5.1": "Encoded Field Section Prefix",
    "9204#4.5.1.1": "Required Insert Count",
    "9204#4.5.1.2": "Base",
    "9204#4.5.2": "Indexed Field Line",
    "9204#4.5.3": "Indexed Field Line with Post-Base Index",
    "9204#4.5.4": "Literal Field Line with Name Reference",
    "9204#4.5.5": "Literal Field Line with Post-Base Name Reference",
    "9204#4.5.6": "Literal Field Line with Literal Name",
    "9204#5": "Configuration",
    "9204#6": "Error Handling",
    "9204#7": "Security Considerations",
    "9204#7.1": "Probing Dynamic Table State",
    "9204#7.1.1": "Applicability to QPACK and HTTP",
    "9204#7.1.2": "Mitigation",
    "9204#7.1.3": "Never-Indexed Literals",
    "9204#7.2": "Static Huffman Encoding",
    "9204#7.3": "Memory Consumption",
    "9204#7.4": "Implementation Limits",
    "9204#8": "IANA Considerations",
    "9204#8.1": "Settings Registration",
    "9204#8.2": "Stream Type Registration",
    "9204#8.3": "Error Code Registration",
    "9204#A": "Static Table",
    "9204#B": "Encoding and Decoding Examples",
    "9204#B.1": "Literal Field Line with Name Reference",
    "9204#B.2": "Dynamic Table",
    "9204#B.3": "Speculative Insert",
    "9204#B.4": "Duplicate Instruction, Stream Cancellation",
    "9204#B.5": "Dynamic Table Insert, Eviction",
    "9204#C": "Sample Single-Pass Encoding Algorithm",
    "9000#2.1": "Stream Types and Identifiers",
    "9000#2.2": "Sending and Receiving Data",
    "9000#3.5": "Solicited State Transitions",
    "9000#4.1": "Data Flow Control",
    "9000#4.2": "Increasing Flow Control Limits",
    "9000#10.1": "Idle Timeout",
    "9000#10.2": "Immediate Close",
    "9000#12.2": "Coalescing Packets",
    "9000#16": "Variable-Length Integer Encoding",
    "9000#17": "Packet Formats",
    "9000#19.4": "RESET_STREAM Frames",
    "9000#19.5": "STOP_SENDING Frames",
    "9000#19.8": "STREAM Frames",
    "9000#20.1": "Transport Error Codes",
    "7541#5.1": "Integer Representation",
    "7541#5.2": "String Literal Representation",
    "7541#B": "Huffman Code",
    "8999#5.1": "Long Header",
    "8999#5.2": "Short Header",
    "9001#4.1": "Interface to TLS",
    "9110#6.4.1": "Content Semantics",
    "9110#6.5.1": "Limitations on Use of Trailers",
    "9110#7.2": "Host and :authority",
    "9110#7.6.1": "Connection",
    "9110#7.8": "Upgrade",
    "9110#8.6": "Content-Length",
    "9110#9.3.6": "CONNECT",
    "9110#10.1.1": "Expect",
    "9110#15.2": "Informational 1xx",
    "9218#7.2": "HTTP/3 PRIORITY_UPDATE Frame",
    "9220#3": "WebSockets Upgrade over HTTP/3",
    "9297#2.1.1": "The SETTINGS_H3_DATAGRAM HTTP/3 Setting",
}

#: The RFCs' own titles, for the RFC reader's headings.
RFC_TITLES: dict[str, str] = {
    "7541": "HPACK: Header Compression for HTTP/2",
    "8999": "Version-Independent Properties of QUIC",
    "9000": "QUIC: A UDP-Based Multiplexed and Secure Transport",
    "9001": "Using TLS to Secure QUIC",
    "9110": "HTTP Semantics",
    "9114": "HTTP/3",
    "9204": "QPACK: Field Compression for HTTP/3",
    "9218": "Extensible Prioritization Scheme for HTTP",
    "9220": "Bootstrapping WebSockets with HTTP/3",
    "9297": "HTTP Datagrams and the Capsule Protocol",
}


def is_reference(text: str) -> bool:
    """Is ``text`` written as a section reference (``9114#7.2.4``, ``9204#B.1``)?"""
    return SECTION_REFERENCE.fullmatch(text) is not None


def split(section: str) -> tuple[str, str]:
    """``"9114#7.2.4"`` -> ``("9114", "7.2.4")``."""
    number, _, part = section.partition("#")
    return number, part


def sort_key(section: str) -> tuple[int, int, tuple[int, ...]]:
    """Document order: numbered sections by their numbers, then appendices A, B, ..."""
    number, part = split(section)
    head, *rest = part.split(".") if part else ("0",)
    appendix = head.isalpha()
    first = ord(head) - ord("A") if appendix else int(head)
    return (int(number), int(appendix), (first, *(int(piece) for piece in rest)))


def depth(section: str) -> int:
    """How deep a section is nested: 7 -> 1, 7.2 -> 2, 7.2.4 -> 3, A.2 -> 2."""
    return split(section)[1].count(".") + 1


def parent(section: str) -> str | None:
    """The enclosing section (``9114#7.2.4`` -> ``9114#7.2``), None at the top."""
    number, part = split(section)
    if "." not in part:
        return None
    return f"{number}#{part.rpartition('.')[0]}"


def label(section: str) -> str:
    """``"9114#7.2.4"`` -> ``"RFC 9114 §7.2.4"``; ``"9204#B.1"`` -> ``"RFC 9204 Appendix B.1"``."""
    number, part = split(section)
    if not part:
        return f"RFC {number}"
    if part[:1].isalpha():
        return f"RFC {number} Appendix {part}"
    return f"RFC {number} §{part}"


def url(section: str) -> str:
    """The official text of a section, on the RFC Editor's site."""
    number, part = split(section)
    base = f"https://www.rfc-editor.org/rfc/rfc{number}"
    if not part:
        return base
    anchor = "appendix" if part[:1].isalpha() else "section"
    return f"{base}#{anchor}-{part}"


def sections_of(rfc: str) -> list[str]:
    """Every listed section of one RFC, in document order."""
    return sorted((s for s in TITLES if split(s)[0] == rfc), key=sort_key)
