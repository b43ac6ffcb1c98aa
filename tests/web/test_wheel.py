"""The wheel carries the web UI: templates, static files and the npm Socket.IO client.

The project is copied to a temporary folder (so the build touches nothing in the working
tree) and built with `pip wheel`, as a user would; the wheel's file list must hold every
template and static file of h3learn/web and h3learn/web/static/vendor/socket.io.min.js
(setup.py copies it from web/node_modules). Installed on its own, the wheel serves the page
and the client from the package. Without `npm ci` a wheel build stops and says what to
run, while an editable install (which serves web/node_modules) goes ahead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "h3learn" / "web"
CLIENT = Path("web/node_modules/socket.io-client/dist/socket.io.min.js")
VENDORED = "h3learn/web/static/vendor/socket.io.min.js"


def copy_project(target: Path, with_client: bool) -> Path:
    project = target / "project"
    for name in ("pyproject.toml", "setup.py", "README.md"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(
        ROOT / "h3learn", project / "h3learn", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "lessons", project / "lessons")
    if with_client:
        (project / CLIENT).parent.mkdir(parents=True)
        shutil.copy(ROOT / CLIENT, project / CLIENT)
    return project


def build_wheel(project: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(project)],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (ROOT / CLIENT).is_file():
        pytest.skip("web/node_modules is not installed (scripts/setup runs npm ci)")
    tmp = tmp_path_factory.mktemp("wheel")
    result = build_wheel(copy_project(tmp, with_client=True), tmp / "dist")
    assert result.returncode == 0, result.stderr
    (built,) = (tmp / "dist").glob("h3learn-*.whl")
    return built


def test_the_wheel_holds_the_templates_static_files_and_the_socketio_client(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        path.relative_to(ROOT).as_posix()
        for folder in ("templates", "static")
        for path in (WEB / folder).rglob("*")
        if path.is_file() and path.suffix in {".html", ".css", ".js"}
    }
    assert "h3learn/web/templates/pages/step.html" in expected  # the walk found them
    assert expected <= names, sorted(expected - names)
    assert VENDORED in names
    assert zipfile.ZipFile(wheel).read(VENDORED) == (ROOT / CLIENT).read_bytes()
    lessons = {
        "h3learn/curriculum/lessons/" + path.relative_to(ROOT / "lessons").as_posix()
        for path in (ROOT / "lessons").rglob("*.toml")
    }
    assert "h3learn/curriculum/lessons/02-a-first-get.toml" in lessons
    assert lessons <= names, sorted(lessons - names)


def test_the_installed_wheel_serves_the_page_and_the_client(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    check = f"""
import sys, tempfile
sys.path.insert(0, {str(target)!r})
import h3learn
assert h3learn.__file__.startswith({str(target)!r}), h3learn.__file__
from h3learn.web import create_app
from h3learn.web.pages import default_socketio_client
assert str(default_socketio_client()).startswith({str(target)!r})
client = create_app({{"DATA_DIR": tempfile.mkdtemp()}}).test_client()
assert client.get("/vendor/socket.io.min.js").status_code == 200
assert b"step.js" in client.get("/trace/first-get/step/0").data
assert client.get("/static/css/app.css").status_code == 200
assert b"lesson.js" in client.get("/lesson/02-a-first-get/step/0").data
print("ok")
"""
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_a_wheel_without_npm_ci_is_refused_with_the_command_to_run(tmp_path: Path) -> None:
    result = build_wheel(copy_project(tmp_path, with_client=False), tmp_path / "dist")
    assert result.returncode != 0
    assert "npm ci --prefix web" in result.stdout + result.stderr
    assert not list(tmp_path.glob("dist/*.whl"))


def test_an_editable_install_needs_no_client(tmp_path: Path) -> None:
    """scripts/setup installs h3learn (editable) before it runs npm ci."""
    project = copy_project(tmp_path, with_client=False)
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
        check=True,
        timeout=120,
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(tmp_path / "venv" / "bin" / "python"),
            "install",
            "-q",
            "--no-deps",
            "-e",
            str(project),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert not (project / VENDORED).exists()  # nothing copied into the source tree
