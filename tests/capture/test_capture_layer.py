"""Live capture's place in docs/architecture.md: below the web layer, above the transports.

h3learn/capture runs the endpoint and keeps captures; it may use the transports, the trace
layer and the HTTP/3 server's application, but never Flask or the web layer (which reads
from it), and the web layer never reaches past it into aioquic.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "h3learn"


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((PACKAGE / "capture").glob("*.py")), ids=lambda p: p.name)
def test_the_capture_layer_never_imports_the_web(path: Path) -> None:
    for module in imports(path):
        assert module.split(".")[0] not in {"flask", "flask_socketio", "werkzeug"}, module
        assert not module.startswith("h3learn.web"), module
    assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} has no docstring"


@pytest.mark.parametrize(
    "name", ["live.py", "captures.py", "live_socket.py"], ids=lambda name: name
)
def test_the_live_web_modules_use_no_quic_and_parse_no_bytes(name: str) -> None:
    for module in imports(PACKAGE / "web" / name):
        assert module.split(".")[0] not in {"aioquic", "asyncio", "socket"}, module
        assert not module.startswith(("h3learn.h3.", "h3learn.qpack", "h3learn.wire")), module
