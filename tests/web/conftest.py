"""Fixtures most web tests share: the app on a fresh data folder, and its test client.

A test file that needs other settings defines its own ``app`` (pytest takes the nearest
fixture of a name); ``client`` then comes from that app.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient
from web_helpers import make_app


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Flask]:
    """The app on its defaults, with its data in ``tmp_path``; its live pump is stopped after."""
    app = make_app(tmp_path)
    yield app
    app.extensions["h3learn_live"].close()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
