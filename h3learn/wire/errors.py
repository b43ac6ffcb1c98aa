"""Errors raised while reading the wire primitives (RFC 7541 §5, RFC 9000 §16).

The wire layer knows nothing of QPACK or HTTP/3 error codes: whether a bad integer is a
QPACK_DECOMPRESSION_FAILED (in a field section) or a QPACK_ENCODER_STREAM_ERROR (on the
encoder stream) depends on where it was read. The layers above catch `MalformedInput` and
raise their own error with the rule it broke; `NeedMoreData` tells a stream parser to wait.
"""


class NeedMoreData(Exception):
    """The input ended inside a field: wait for more bytes (not an error on a stream)."""


class MalformedInput(Exception):
    """The bytes break an encoding rule of the wire primitives.

    ``rule`` says which rule in plain words; ``rfc`` names the section, e.g. "7541#5.2".
    ``beyond_limit``: the bytes break no rule but exceed what h3learn accepts (one of the
    implementation limits of RFC 9204 §7.4), which the caller may treat more mildly.
    """

    def __init__(self, rule: str, rfc: str, *, beyond_limit: bool = False) -> None:
        super().__init__(f"{rule} (RFC {rfc.replace('#', ' §')})")
        self.rule = rule
        self.rfc = rfc
        self.beyond_limit = beyond_limit
