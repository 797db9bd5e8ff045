"""The ``sightline`` command: ``serve`` (the main job), ``replay``, ``demo``."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from . import __version__
from .config import BridgeConfig, data_dir_from, load_or_create_secret

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sightline", description="Sightline: line of sight through visibility zones")
    parser.add_argument("--version", action="version", version=f"sightline {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the bridge (WebSocket /ws and HTTP on one port)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    _storage_options(serve)
    serve.add_argument("--secret", help="the secret Foundry must send (env SIGHTLINE_SECRET; default: generated)")

    replay = commands.add_parser("replay", help="answer client messages from a file, one JSON object per line")
    replay.add_argument("file", help="the file to read, or - for standard input")

    demo = commands.add_parser("demo", help="play a short Infinity skirmish through a real bridge")
    demo.add_argument("--svg", default="sightline-demo.svg", help="where to write the scene picture")
    demo.add_argument("--locale", choices=["en", "es"], default="en")
    return parser


def _storage_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", help="where the bridge keeps its data (env SIGHTLINE_DATA_DIR)")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve(args)
    if args.command == "replay":
        return _replay(args)
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(svg_path=args.svg, locale=args.locale)
    raise AssertionError(args.command)  # pragma: no cover - argparse requires a command


def _serve(args: argparse.Namespace) -> int:
    from .server import serve

    data_dir = data_dir_from(args.data_dir)
    config = BridgeConfig(
        host=args.host,
        port=args.port,
        data_dir=data_dir,
        secret=load_or_create_secret(data_dir, args.secret),
    )

    def announce(line: str) -> None:
        print(line, flush=True)

    asyncio.run(serve(config, announce=announce))
    return 0


def _replay(args: argparse.Namespace) -> int:
    from .replay import run_replay

    if args.file == "-":
        return run_replay(sys.stdin, sys.stdout)
    try:
        with open(args.file, encoding="utf-8") as source:
            return run_replay(source, sys.stdout)
    except OSError as exc:
        print(f"sightline replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
