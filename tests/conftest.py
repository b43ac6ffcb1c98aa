"""Shared pytest fixtures and the rule for tests that need an optional tool.

A test that needs a program the project does not install itself (Chromium, ngtcp2) calls
`require_tool`. On a user's machine a missing tool skips the test; in CI, where .ci/run sets
H3LEARN_REQUIRE_TOOLS=1, it fails the test instead, so a missing install cannot hide.

Hypothesis runs without its clock-based checks (the per-example deadline and the "too slow"
health check): speed is measured by benchmarks/, never by tests, and on a loaded machine
those checks fail tests whose properties hold.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import HealthCheck, settings

VECTORS = Path(__file__).parent / "vectors"

settings.register_profile("h3learn", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("h3learn")


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


@pytest.fixture
def vectors() -> Path:
    """The folder of test vectors copied into the project (tests never read ../shared)."""
    return VECTORS
