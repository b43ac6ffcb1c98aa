"""Shared pytest fixtures and settings.

Tests that need an optional tool (Chromium, ngtcp2) use tests/optional_tools.py, which
turns a missing tool into a skip on a user's machine and a failure in CI.

Hypothesis runs without its clock-based checks (the per-example deadline and the "too slow"
health check): speed is measured by benchmarks/, never by tests, and on a loaded machine
those checks fail tests whose properties hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

VECTORS = Path(__file__).parent / "vectors"

settings.register_profile("h3learn", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("h3learn")


@pytest.fixture
def vectors() -> Path:
    """The folder of test vectors copied into the project (tests never read ../shared)."""
    return VECTORS
