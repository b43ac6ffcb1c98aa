"""Build steps pyproject.toml cannot say: the Socket.IO client and the lessons in the wheel.

The lessons (lessons/*.toml and lessons/rfc/*.toml, data at the repository root) are
copied into the built package as h3learn/curriculum/lessons/, where
h3learn.curriculum.catalogue.default_lessons_dir looks first.

Everything else about the package is in pyproject.toml. The web UI serves the npm package
socket.io-client (web/package.json, installed by `npm ci --prefix web`, never committed);
an installed h3learn has no web/ folder, so the wheel carries a copy at
h3learn/web/static/vendor/socket.io.min.js, where h3learn.web.pages looks first. The copy
is made into the build directory only: the source tree never holds third-party code.

An editable install (`pip install -e .`, which scripts/setup runs before `npm ci`) copies
nothing: it serves the file from web/node_modules. A wheel built without the client fails
with the command that fetches it, rather than producing a UI without live updates.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

ROOT = Path(__file__).resolve().parent
#: Where `npm ci --prefix web` puts the client, and where the wheel carries it.
CLIENT = ROOT / "web" / "node_modules" / "socket.io-client" / "dist" / "socket.io.min.js"
PACKAGED = Path("h3learn") / "web" / "static" / "vendor" / "socket.io.min.js"
#: The lessons and RFC annotations, and where the wheel carries them.
LESSONS = ROOT / "lessons"
PACKAGED_LESSONS = Path("h3learn") / "curriculum" / "lessons"


class BuildPyWithSocketIO(build_py):
    """build_py, then the Socket.IO client and the lessons copied into the built package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not CLIENT.is_file():
            raise SetupError(
                f"{CLIENT.relative_to(ROOT)} is missing: run `npm ci --prefix web` (or "
                "scripts/setup) before building a wheel, so that it carries the browser's "
                "Socket.IO client"
            )
        target = Path(self.build_lib) / PACKAGED
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(CLIENT, target)
        lessons = Path(self.build_lib) / PACKAGED_LESSONS
        for source in sorted([*LESSONS.glob("*.toml"), *LESSONS.glob("rfc/*.toml")]):
            copy = lessons / source.relative_to(LESSONS)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)


setup(cmdclass={"build_py": BuildPyWithSocketIO})
