"""The layering rules of docs/architecture.md, checked on the source.

The protocol core (h3learn/wire, h3learn/qpack, h3learn/h3) is sans-IO (RFC 9114 and
RFC 9204 are implemented as bytes in, bytes and events out): it must never import asyncio,
sockets, aioquic or Flask, and QPACK must not depend on HTTP/3.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "h3learn"
FORBIDDEN_IN_CORE = {"asyncio", "socket", "aioquic", "flask", "flask_socketio", "selectors"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module == "h3learn":
            names.update(f"h3learn.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def core_files(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).glob("*.py"))


@pytest.mark.parametrize("layer", ["wire", "qpack", "h3"])
def test_core_layer_is_sans_io(layer: str) -> None:
    files = core_files(layer)
    assert files or layer == "h3"
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            assert top not in FORBIDDEN_IN_CORE, f"{path.name} imports {module}"


def test_qpack_never_imports_h3() -> None:
    for path in core_files("qpack"):
        for module in imported_modules(path):
            assert not module.startswith("h3learn.h3"), f"{path.name} imports {module}"


def test_wire_imports_only_events_and_itself() -> None:
    for path in core_files("wire"):
        for module in imported_modules(path):
            if module.startswith("h3learn"):
                assert module.startswith(("h3learn.wire", "h3learn.events")), (
                    f"{path.name} imports {module}"
                )


def test_every_core_module_cites_its_rfc_section() -> None:
    """House style: each module's docstring starts from the section it implements."""
    for layer in ("wire", "qpack", "h3"):
        for path in core_files(layer):
            if path.name == "__init__.py":
                continue
            docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
            assert "RFC " in docstring and "§" in docstring, f"{path.name} cites no section"


def test_the_curriculum_is_below_the_web_layer() -> None:
    """h3learn/curriculum records lessons with the core and transports, never with Flask."""
    for path in core_files("curriculum"):
        for module in imported_modules(path):
            assert not module.startswith("h3learn.web"), f"{path.name} imports {module}"
            assert module.split(".")[0] not in {"flask", "flask_socketio", "markdown_it"}, (
                f"{path.name} imports {module}"
            )


#: docs/architecture.md, "Layers", top to bottom: a module may import from its own layer and
#: the ones below it. The command-line modules at the top level are one layer, "cli".
LAYER_ORDER = (
    "cli",
    "web",
    "capture",
    "page_server",
    "curriculum",
    "scenarios",
    "transport",
    "trace",
    "h3",
    "qpack",
    "wire",
    "events",
)
CLI_MODULES = {
    "__init__",  # the package's docstring and version only
    "__main__",
    "cli",
    "cli_arguments",
    "command_error",
    "export_cli",
    "get_cli",
    "h3_server",
    "lessons_cli",
    "qif_cli",
    "serve_cli",
    "walkthrough",
}


def layer_of(name: str) -> str:
    """The layer of ``name``: a package, or a module at the top of h3learn."""
    if name in CLI_MODULES:
        return "cli"
    assert name in LAYER_ORDER, f"h3learn/{name} has no place in docs/architecture.md's layers"
    return name


def test_each_layer_imports_only_from_itself_and_the_layers_below() -> None:
    paths = sorted(path for path in PACKAGE.rglob("*.py") if "node_modules" not in path.parts)
    assert len(paths) > 100
    for path in paths:
        parts = path.relative_to(PACKAGE).parts
        own = layer_of(parts[0].removesuffix(".py"))
        for module in imported_modules(path):
            if not module.startswith("h3learn."):
                continue
            other = layer_of(module.split(".")[1])
            assert LAYER_ORDER.index(other) >= LAYER_ORDER.index(own), (
                f"{path.relative_to(PACKAGE)} ({own}) imports {module} ({other}), a layer above it"
            )
