"""The rule for tests that need an optional tool.

A test that needs a program the project does not install itself (Chromium, ngtcp2) calls
`require_tool`. On a user's machine a missing tool skips the test; in CI, where .ci/run sets
H3LEARN_REQUIRE_TOOLS=1, it fails the test instead, so a missing install cannot hide.

(A module of its own, not conftest.py: tests/web has a conftest.py of its own, and two
modules named conftest cannot both be imported by that name.)
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest


def require_tool(name: str) -> str:
    """The path of the program ``name``; skip (or fail, in CI) if it is not installed."""
    path = shutil.which(name)
    if path is None:
        skip_or_fail(f"{name} is not installed")
    return path


def skip_or_fail(message: str) -> NoReturn:
    """Skip a test whose optional tool cannot run here; in CI, fail it instead."""
    if os.environ.get("H3LEARN_REQUIRE_TOOLS") == "1":
        pytest.fail(f"{message}, and H3LEARN_REQUIRE_TOOLS=1 forbids skipping")
    pytest.skip(message)
