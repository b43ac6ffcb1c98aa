"""The trace layer's place in docs/architecture.md: it sits above the protocol core.

h3learn/trace reads events only. It may use h3learn.events, and the qpack and h3 packages
for names (enums), but never a transport, the web layer, aioquic or a socket: the replay,
the stores and the qlog mappings are pure functions of recorded events.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TRACE = Path(__file__).resolve().parents[2] / "h3learn" / "trace"
ALLOWED_PROJECT_MODULES = ("h3learn.events", "h3learn.trace", "h3learn.qpack", "h3learn.h3")
FORBIDDEN = {"aioquic", "asyncio", "socket", "flask", "flask_socketio", "web"}


@pytest.mark.parametrize("path", sorted(TRACE.glob("*.py")), ids=lambda path: path.name)
def test_the_trace_layer_imports_only_events_and_the_cores_names(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            assert module.split(".")[0] not in FORBIDDEN, f"{path.name} imports {module}"
            if module.startswith("h3learn"):
                assert module.startswith(ALLOWED_PROJECT_MODULES), f"{path.name} imports {module}"
                assert not module.startswith("h3learn.transport"), module


def test_every_trace_module_says_what_it_is() -> None:
    for path in TRACE.glob("*.py"):
        assert ast.get_docstring(ast.parse(path.read_text())), f"{path.name} has no docstring"
