"""One build step pyproject.toml cannot say: put the browser's Socket.IO client in the wheel.

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


class BuildPyWithSocketIO(build_py):
    """build_py, then the Socket.IO client copied into the built package."""

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


setup(cmdclass={"build_py": BuildPyWithSocketIO})
