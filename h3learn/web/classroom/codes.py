"""Join codes a teacher reads aloud, and the secret token that lets only the teacher drive.

A join code is six symbols from an alphabet without the pairs people confuse when they
read a projector or hear a code spoken: no 0/O, 1/I/L, and no U (it is read as V). That
leaves 30 symbols, so 30**6 (about 729 million) codes; with the default limit of 1,000
open rooms a random guess finds one about once in 729,000 tries. The code is printed as
two groups of three, ``K7P-3XM``; what a student types is forgiving (any case, spaces
and dashes ignored).

The join code is public (it is on the projector). Control of a room needs the teacher's
token instead: 32 random bytes from `secrets`, unrelated to the code, given to the
teacher once when the room is created. Only its SHA-256 is stored, so a copy of the room
store does not hand out control, and a token presented later is compared in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

ALPHABET = "23456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 6


class BadCode(ValueError):
    """What a student typed cannot be a join code."""


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def display_code(code: str) -> str:
    """``K7P3XM`` as it is shown and read aloud: ``K7P-3XM``."""
    half = CODE_LENGTH // 2
    return f"{code[:half]}-{code[half:]}"


def normalize_code(text: str) -> str:
    """What a student typed as a code (``k7p 3xm``, ``K7P-3XM``), or `BadCode` saying why."""
    code = "".join(text.split()).replace("-", "").upper()
    if len(code) != CODE_LENGTH:
        raise BadCode(f"a join code has {CODE_LENGTH} letters and digits, not {len(code)}")
    wrong = sorted({symbol for symbol in code if symbol not in ALPHABET})
    if wrong:
        hint = " (codes never use 0, 1, I, L, O or U)" if set(wrong) & set("01ILOU") else ""
        raise BadCode(f"a join code has no {', '.join(repr(s) for s in wrong)}{hint}")
    return code


def new_token() -> str:
    """The teacher's secret: 32 random bytes, URL-safe base64."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Whether ``token`` is the one whose hash is stored, compared in constant time."""
    return hmac.compare_digest(token_hash(token), stored_hash)
