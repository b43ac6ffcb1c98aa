"""``h3learn serve``: the web UI that replays traces step by step.

    h3learn serve [--host 127.0.0.1] [--port 5000] [--data-dir ~/.local/share/h3learn]

The built-in examples are recorded at start; traces uploaded through the page are saved
in DATA_DIR/traces and listed with them. The server is Werkzeug's, with Flask-SocketIO in
threading mode: fine for a laptop or a classroom of a few dozen (docs/web-api.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from h3learn.web import create_app, default_data_dir, socketio


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "serve",
        help="start the web UI (step through traces in a browser)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=5000, help="port to listen on")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help=f"where traces are saved (default {default_data_dir()})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
    app = create_app({"DATA_DIR": str(data_dir)})
    print(f"h3learn serve: http://{args.host}:{args.port}/ (traces in {data_dir / 'traces'})")
    socketio.run(app, host=args.host, port=args.port, allow_unsafe_werkzeug=True)
    return 0
