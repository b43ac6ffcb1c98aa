"""``h3learn serve``: the web UI that replays traces step by step.

    h3learn serve [--host 127.0.0.1] [--port 5000] [--data-dir ~/.local/share/h3learn]
                  [--public-url URL] [--message-queue redis://HOST:PORT/DB]
                  [--lessons-dir DIR]

The lessons (h3learn's own, or a teacher's folder: --lessons-dir) are read at start and
each recorded when first opened; a broken lesson file stops the server with its file and
line. The built-in examples are recorded at start; traces uploaded through the page are saved
in DATA_DIR/traces and listed with them. The server is Werkzeug's, with Flask-SocketIO in
threading mode: one process holds a class of a few hundred students (docs/classroom.md).
``--public-url`` is the address students reach this server at (for the classroom's join
link and QR code). ``--message-queue`` lets several processes share classroom rooms
through Redis; run them behind a load balancer with sticky sessions (docs/classroom.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import redis

from h3learn.command_error import CommandError
from h3learn.curriculum.catalogue import default_lessons_dir
from h3learn.curriculum.source import SourceError
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
    parser.add_argument(
        "--public-url",
        default=None,
        help="the address students open, for the classroom join link and QR code "
        "(default: the address the teacher's browser used)",
    )
    parser.add_argument(
        "--message-queue",
        default=None,
        metavar="URL",
        help="share classroom rooms with other processes through Redis (redis://HOST:PORT/DB)",
    )
    parser.add_argument(
        "--lessons-dir",
        type=Path,
        default=None,
        help=f"a folder of lessons and rfc/ annotations (default {default_lessons_dir()})",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
    if args.message_queue is not None:
        check_message_queue(args.message_queue)
    if args.lessons_dir is not None and not args.lessons_dir.is_dir():
        raise CommandError(f"--lessons-dir {args.lessons_dir}: no such folder")
    try:
        app = create_app(
            {
                "DATA_DIR": str(data_dir),
                "MESSAGE_QUEUE": args.message_queue,
                "PUBLIC_URL": args.public_url,
                "LESSONS_DIR": args.lessons_dir,
            }
        )
    except SourceError as error:
        raise CommandError(f"a lesson file is broken: {error}") from None
    print(f"h3learn serve: http://{args.host}:{args.port}/ (traces in {data_dir / 'traces'})")
    if args.message_queue is not None:
        print(f"h3learn serve: classroom rooms shared through {args.message_queue}")
    socketio.run(app, host=args.host, port=args.port, allow_unsafe_werkzeug=True)
    return 0


def check_message_queue(url: str) -> None:
    """Refuse to start, with the reason, unless ``url`` is a Redis server that answers."""
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise CommandError(f"--message-queue must be a redis:// URL, not {url!r}")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=5).ping()
    except (redis.RedisError, ValueError) as error:
        raise CommandError(f"cannot reach the message queue at {url}: {error}") from None
