"""Shared pytest fixtures and the rule for tests that need an optional tool.

A test that needs a program the project does not install itself (Chromium, ngtcp2) calls
`require_tool`. On a user's machine a missing tool skips the test; in CI, where .ci/run sets
H3LEARN_REQUIRE_TOOLS=1, it fails the test instead, so a missing install cannot hide.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

VECTORS = Path(__file__).parent / "vectors"


def require_tool(name: str) -> str:
    """The path of the program ``name``; skip (or fail, in CI) if it is not installed."""
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed"
        if os.environ.get("H3LEARN_REQUIRE_TOOLS") == "1":
            pytest.fail(f"{message}, and H3LEARN_REQUIRE_TOOLS=1 forbids skipping")
        pytest.skip(message)
    return path


@pytest.fixture
def vectors() -> Path:
    """The folder of test vectors copied into the project (tests never read ../shared)."""
    return VECTORS
