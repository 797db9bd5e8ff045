"""The ``sightline`` command: ``serve`` (the main job), ``replay``, ``demo``."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from . import __version__
from .arguments import at_least, host, port
from .config import (
    INLINE_MS_MOST,
    LOG_WAIT_MOST,
    SECRET_FILE,
    BridgeConfig,
    StartupError,
    data_dir_from,
    ensure_secret,
    ensure_writable,
    stored_secret,
)
from .log.cli import add_log_parser, run_log_command

__all__ = ["main"]

#: The collector's first threshold in a ``sightline replay`` process (Python's default: 700); see :func:`main`.
REPLAY_GC_YOUNG = 50_000


class _Parser(argparse.ArgumentParser):
    """A parser whose errors are one line, as every other failure of the command: the usage it would print
    first (32 lines for ``serve``) is left to ``--help``. Subcommands' parsers are of this class too, and
    each refuses what it does not know itself, so the error names it (``sightline serve: error:
    unrecognized arguments: …``, not ``sightline: error: …``)."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> tuple[Any, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        commands = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if commands is not None and message == f"the following arguments are required: {commands.metavar}":
            self.exit(2, _command_list(self.prog, commands))
        line = " ".join(message.split())
        self.exit(2, f"{self.prog}: error: {line} ({self.prog} --help lists the options)\n")


def _command_list(prog: str, commands: argparse._SubParsersAction[Any]) -> str:
    """What ``sightline`` (or ``sightline log``, ``sightline traveller``) alone prints: that a command is
    missing, then each command with its one line of help, as ``--help`` lists them, then where each command's
    options are listed."""
    helps = [(action.dest, action.help or "") for action in commands._get_subactions()]
    width = max(len(name) for name, _ in helps)
    lines = [f"{prog}: error: a command is needed, one of:"]
    lines += [f"  {name:<{width}}  {text}".rstrip() for name, text in helps]
    lines.append(f"({prog} COMMAND --help lists a command's options)")
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sightline", description="Sightline: line of sight through visibility zones")
    parser.add_argument("--version", action="version", version=f"sightline {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the bridge (WebSocket /ws and HTTP on one port)")
    defaults = BridgeConfig()
    serve.add_argument(
        "--host", type=host, default=defaults.host, help=f"address to listen on {_default(defaults.host)}"
    )
    serve.add_argument(
        "--port", type=port, default=defaults.port, help=f"port; 0 picks a free one {_default(str(defaults.port))}"
    )
    _storage_options(serve)
    serve.add_argument(
        "--secret",
        help="the secret Foundry must send (env SIGHTLINE_SECRET; default: the one kept in the data directory, "
        "made and printed by the first start)",
    )
    serve.add_argument(
        "--world-secret",
        action="append",
        default=[],
        metavar="WORLD=SECRET",
        help="a secret that opens only WORLD (repeatable; default: only those of <data-dir>/worlds.json, "
        "see `sightline secret --world`)",
    )
    serve.add_argument(
        "--certfile", help="TLS certificate (PEM) to serve wss:// and https:// (default: none, ws:// and http://)"
    )
    serve.add_argument("--keyfile", help="TLS private key (PEM) (default: the one inside --certfile)")
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="accept WebSocket connections only from this Origin, e.g. https://foundry.example.org (repeatable; "
        "default: from any page)",
    )
    serve.add_argument(
        "--public-url",
        default=os.environ.get("SIGHTLINE_PUBLIC_URL"),
        metavar="URL",
        help="the address browsers reach the bridge at, e.g. https://sightline.example.org behind a TLS proxy, "
        "or https://example.org/a/ under a proxy's path: an https URL makes the log's sign-in cookie Secure, and a "
        "path keeps the log's links, redirects and cookie under it (env SIGHTLINE_PUBLIC_URL; default: none)",
    )
    serve.add_argument(
        "--trusted-proxy",
        action="append",
        default=[],
        metavar="ADDRESS",
        help="a reverse proxy whose X-Forwarded-For names the client, e.g. 127.0.0.1 (repeatable): wrong "
        "secrets are then slowed per client rather than per proxy (default: none)",
    )
    serve.add_argument(
        "--session-idle",
        type=at_least(0, exclusive=True, unit="minutes"),
        default=defaults.session_idle_minutes,
        metavar="MINUTES",
        help="a game session with no logged ruling for this long closes; the next ruling opens a new one "
        f"{_default(defaults.session_idle_minutes, 'minutes')}",
    )
    serve.add_argument(
        "--log-wait",
        type=at_least(0, exclusive=True, unit="seconds", most=LOG_WAIT_MOST),
        default=defaults.log_wait,
        metavar="SECONDS",
        help="the longest a ruling's answer waits for the log to commit it; past it the ruling is answered with "
        f"logged: false (a database that hangs must not stop the table) {_default(defaults.log_wait, 'seconds')}",
    )
    serve.add_argument(
        "--log-wait-failing",
        type=at_least(0, exclusive=True, unit="seconds", most=LOG_WAIT_MOST),
        default=defaults.log_wait_failing,
        metavar="SECONDS",
        help="the same while the log is failing already (its last write failed or timed out) "
        f"{_default(defaults.log_wait_failing, 'seconds')}",
    )
    serve.add_argument(
        "--inline-ms",
        type=at_least(0, unit="ms", most=INLINE_MS_MOST),
        default=defaults.inline_ms,
        metavar="MS",
        help="a world's token moves whose last ones each took at most this much CPU are ruled on the bridge's main "
        "thread, without the hand-off to the world's own thread (faster answers); other worlds' messages may wait "
        f"that long behind one; 0: never {_default(defaults.inline_ms, 'ms')}",
    )
    limits = serve.add_argument_group("limits")
    limits.add_argument(
        "--max-frame-bytes",
        type=at_least(1, integer=True),
        default=defaults.max_frame_bytes,
        help="bytes of the largest message a client may send: a larger one is refused, one over 4 times as large "
        f"closes the connection {_default(defaults.max_frame_bytes, 'bytes')}",
    )
    limits.add_argument(
        "--messages-per-second",
        type=at_least(0, exclusive=True),
        default=defaults.messages_per_second,
        help="messages a connection may send per second, on average; more are refused as too fast "
        f"{_default(defaults.messages_per_second)}",
    )
    limits.add_argument(
        "--message-burst",
        type=at_least(1, integer=True),
        default=defaults.message_burst,
        help=f"messages a connection may send at once, before --messages-per-second {_default(defaults.message_burst)}",
    )
    limits.add_argument(
        "--bytes-per-second",
        type=at_least(1, integer=True),
        default=defaults.bytes_per_second,
        help="bytes a connection may send per second, on average, in bursts of this or 4 times --max-frame-bytes "
        "(the larger), and before their hello all connections from one client address together; a frame over "
        "what is left is refused as too fast and the connection is not read until there is room for it again "
        f"{_default(defaults.bytes_per_second, 'bytes')}",
    )
    limits.add_argument(
        "--max-nesting",
        type=at_least(1, integer=True),
        default=defaults.max_nesting,
        help=f"how deep a message's JSON may nest {_default(defaults.max_nesting)}",
    )
    limits.add_argument(
        "--max-connections-per-world",
        type=at_least(1, integer=True),
        default=defaults.max_connections_per_world,
        help="connections one world may have at once; a further one is turned away until one leaves "
        f"{_default(defaults.max_connections_per_world)}",
    )
    limits.add_argument(
        "--hello-timeout",
        type=at_least(0, exclusive=True, unit="seconds"),
        default=defaults.hello_timeout,
        help="seconds a new connection has to say hello with a secret and be let in, or it is closed "
        f"{_default(defaults.hello_timeout)}",
    )
    limits.add_argument(
        "--send-queue",
        type=at_least(1, integer=True),
        default=defaults.send_queue,
        help=f"answers (frames) waiting for a client to read them {_default(defaults.send_queue)}",
    )
    limits.add_argument(
        "--send-queue-bytes",
        type=at_least(1, integer=True),
        default=defaults.send_queue_bytes,
        help="bytes of answers waiting for a client to read them; a larger answer is sent as the client reads "
        f"{_default(defaults.send_queue_bytes, 'bytes')}",
    )
    limits.add_argument(
        "--send-timeout",
        type=at_least(0, exclusive=True, unit="seconds"),
        default=defaults.send_timeout,
        help="seconds a client that has stopped reading may keep its full queue of answers before the bridge "
        f"closes its connection as overloaded {_default(defaults.send_timeout)}",
    )
    limits.add_argument(
        "--header-timeout",
        type=at_least(0, exclusive=True, unit="seconds"),
        default=defaults.header_timeout,
        help="seconds a new connection has to send its HTTP request line and headers (and TLS handshake) "
        f"{_default(defaults.header_timeout)}",
    )
    limits.add_argument(
        "--max-connections",
        type=at_least(0, integer=True),
        default=defaults.max_connections,
        help="open connections in all, more are answered 503 (Service Unavailable); 0: the process's open-file "
        f"limit less 64 {_default(defaults.max_connections)}",
    )
    limits.add_argument(
        "--drain-timeout",
        type=at_least(0, unit="seconds"),
        default=defaults.drain_timeout,
        help=f"seconds from SIGTERM/SIGINT to exit, whatever is still running {_default(defaults.drain_timeout)}",
    )
    limits.add_argument(
        "--world-linger",
        type=at_least(0, unit="seconds"),
        default=defaults.world_linger,
        help="seconds a world's scenes are kept after its last client left (then dropped, memory given back) "
        f"{_default(defaults.world_linger)}",
    )
    limits.add_argument(
        "--heartbeat",
        type=at_least(0, unit="seconds"),
        default=defaults.heartbeat,
        help="seconds between pings that find clients gone without closing; 0 turns them off "
        f"{_default(defaults.heartbeat)}",
    )
    limits.add_argument(
        "--auth-free-failures",
        type=at_least(0, integer=True),
        default=defaults.auth_free_failures,
        help="wrong secrets per client address before each further attempt waits "
        f"{_default(defaults.auth_free_failures)}",
    )
    limits.add_argument(
        "--auth-max-delay",
        type=at_least(0, unit="seconds"),
        default=defaults.auth_max_delay,
        help="seconds: the longest wait between attempts of an address that keeps sending wrong secrets "
        f"{_default(defaults.auth_max_delay)}",
    )
    for kind in ("regions", "tokens", "walls", "lights", "levels"):
        limits.add_argument(
            f"--max-{kind}",
            type=at_least(1, integer=True),
            default=getattr(defaults, f"max_{kind}"),
            help=f"{kind} of a scene {_default(getattr(defaults, f'max_{kind}'))}",
        )
    limits.add_argument(
        "--max-vertices",
        type=at_least(1, integer=True),
        default=defaults.max_vertices,
        help="corners a scene's shapes are drawn with (polygons; curves by the polygon standing for them) "
        f"{_default(defaults.max_vertices)}",
    )
    limits.add_argument(
        "--max-ring-vertices",
        type=at_least(1, integer=True),
        default=defaults.max_ring_vertices,
        help=f"corners of one polygon or ring {_default(defaults.max_ring_vertices)}",
    )
    limits.add_argument(
        "--max-scenes-per-world",
        type=at_least(1, integer=True),
        default=defaults.max_scenes_per_world,
        help="scenes a world holds (the least recently used one nobody watches is forgotten for a new one) "
        f"{_default(defaults.max_scenes_per_world)}",
    )
    limits.add_argument(
        "--max-watches-per-connection",
        type=at_least(1, integer=True),
        default=defaults.max_watches_per_connection,
        help="live sight-line overlays (watches) one connection may keep open "
        f"{_default(defaults.max_watches_per_connection)}",
    )
    limits.add_argument(
        "--max-watch-pairs",
        type=at_least(1, integer=True),
        default=defaults.max_watch_pairs,
        help=f"pairs of tokens (who sees whom) one watch follows {_default(defaults.max_watch_pairs)}",
    )
    limits.add_argument(
        "--max-world-watch-pairs",
        type=at_least(1, integer=True),
        default=defaults.max_world_watch_pairs,
        help="pairs of tokens all the open watches of one world follow together (a 100-token overlay is 9,900) "
        f"{_default(defaults.max_world_watch_pairs)}",
    )
    limits.add_argument(
        "--max-watch-tests",
        type=at_least(1, integer=True),
        default=defaults.max_watch_tests,
        help="work one watch may ask for: its pairs × (the scene's corners + walls) "
        f"{_default(defaults.max_watch_tests)}",
    )
    limits.add_argument(
        "--max-best-line-tests",
        type=at_least(1, integer=True),
        default=defaults.max_best_line_tests,
        help="work one ruling may ask for in a scene whose Sight lines setting is Best line: pairs × 81 lines tried "
        f"per pair × (zones + walls) {_default(defaults.max_best_line_tests)}",
    )
    limits.add_argument(
        "--max-log-record-bytes",
        type=at_least(1024, integer=True),
        default=defaults.max_log_record_bytes,
        help="bytes one logged ruling may add to the log: its options, the user's name and the tokens it read "
        "(those whose light may reach the target) are kept with every ruling "
        f"{_default(defaults.max_log_record_bytes, 'bytes')}",
    )
    limits.add_argument(
        "--max-option-values",
        type=at_least(16, integer=True),
        default=defaults.max_option_values,
        help="values one ruling's options may hold, counting nested ones (no ruleset reads more than a few; each "
        f"is read into the ruling's memo) {_default(defaults.max_option_values)}",
    )
    serve.add_argument(
        "--ws-compress",
        action="store_true",
        help="compress WebSocket frames (permessage-deflate): less bandwidth to remote clients, more CPU per frame "
        "(default: off)",
    )

    secret = commands.add_parser(
        "secret",
        help="print the bridge secret (serve prints it only at the start that makes it), or with --world a world's "
        "own secret",
    )
    _storage_options(secret, database=False)  # the log is not its business
    secret.add_argument("--world", help="the world whose own secret to print (created on first use)")

    add_log_parser(commands)

    replay = commands.add_parser("replay", help="answer client messages from a file, one JSON object per line")
    replay.add_argument("file", help="the file to read, or - for standard input")

    traveller = commands.add_parser("traveller", help="Traveller tools").add_subparsers(dest="tool", required=True)
    encounter = traveller.add_parser(
        "encounter-range",
        help="encounter range after night and weather, as “Traveller tactical visibility rules (2011-03-17) — "
        "Encounter Ranges” gives it",
    )
    encounter.add_argument("base", type=at_least(0, unit="metres"), help="the terrain's encounter range, in metres")
    encounter.add_argument("--light", default="day", choices=["day", "1", "2", "3"], help="background light level")
    encounter.add_argument("--weather", default="good", choices=["good", "poor", "very-poor"])
    encounter.add_argument("--woods", action="store_true", help="in woods: unaffected by night and weather")
    encounter.add_argument("--locale", default="en", choices=["en", "es"])
    encounter.add_argument("--json", action="store_true", help="print the answer as JSON")

    demo = commands.add_parser("demo", help="play a short Infinity skirmish through a real bridge")
    demo.add_argument("--svg", default="sightline-demo.svg", help="where to write the scene picture")
    demo.add_argument("--locale", choices=["en", "es"], default="en")
    demo.add_argument(
        "--keep-log",
        type=Path,
        metavar="DIR",
        help="log the demo's rulings into DIR/sightline.db and keep them (browse, export or re-judge them later)",
    )
    for choices in (commands, traveller):
        # The usage line lists what may follow ("{serve,secret,…}"); argparse would otherwise name only the
        # destination ("command"). A missing command is told apart by this metavar (_Parser.error).
        choices.metavar = "{" + ",".join(choices.choices) + "}"
    return parser


def _default(value: object, unit: str = "") -> str:
    """``(default: 4,194,304 bytes)``: a default as ``--help`` shows it, from :class:`BridgeConfig`
    (thousands separated, ``240.0`` as ``240``)."""
    shown = f"{value:,}" if isinstance(value, int) else f"{value:,g}" if isinstance(value, float) else str(value)
    if unit == "bytes" and isinstance(value, int) and value % 2**20 == 0:
        unit += f" = {value // 2**20} MiB"
    return f"(default: {shown}{' ' + unit if unit else ''})"


def _storage_options(parser: argparse.ArgumentParser, *, database: bool = True) -> None:
    parser.add_argument(
        "--data-dir",
        help="where the bridge keeps its data: the secret, worlds.json, the log (env SIGHTLINE_DATA_DIR; "
        "default: your user data folder, ~/.local/share/sightline on Linux)",
    )
    if database:
        parser.add_argument(
            "--database",
            default=os.environ.get("SIGHTLINE_DATABASE"),
            help="postgresql://… to keep the log in PostgreSQL (env SIGHTLINE_DATABASE; default: SQLite, "
            "sightline.db in the data directory)",
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure a person can fix ends in one line on standard error and a non-zero
    exit status, never a traceback (2: cannot start or bad input; 141: standard output closed early).

    ``argv`` ``None`` is the ``sightline`` program itself (its console script, ``python -m bridge``), whose
    process ends when this returns: a finished ``replay`` then freezes what the process made for the garbage
    collector (``gc.freeze``), so that the interpreter's last collections at exit skip it rather than walk
    every object the imports and the replay left (the exit took 0.11-0.14 s of CPU, now 0.02 s, after an
    empty file as after a long game). Objects are still freed as the interpreter ends; only the collector's
    passes are spared. Such a process also collects its youngest objects less often (:data:`REPLAY_GC_YOUNG`),
    and NumPy's OpenBLAS starts no thread pool (``OPENBLAS_NUM_THREADS=1`` unless already set).
    Called with a list (tests, tools in a longer-lived process), the collector is left as it is."""
    args = _parser().parse_args(argv)
    name = " ".join(["sightline", args.command, *([args.log_command] if args.command == "log" else [])])
    program_replay = argv is None and args.command == "replay"
    if program_replay:
        # The collector's youngest generation is walked every REPLAY_GC_YOUNG net new objects instead of 700:
        # a long replay's ~100 young passes over what it is making cost more than they free sooner (the long
        # game: 0.13-0.15 s of collections -> 0.02-0.04 s, and ~0.2-0.3 s of the process's CPU; same peak RSS).
        gc.set_threshold(REPLAY_GC_YOUNG, *gc.get_threshold()[1:])
        # A replay runs on one thread and calls no BLAS routine, but NumPy's OpenBLAS starts a pool of threads
        # per core as it loads (~30 ms of the process's CPU here) unless told first; a user's setting is kept.
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        _import_for_replay()
    try:
        status = _run(args)
    except StartupError as exc:
        print(f"{name}: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # `sightline log export … | head`: the reader left. Point standard output at /dev/null so that the
        # interpreter's last flush does not fail again, and say once that the output is incomplete.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        print(f"{name}: standard output closed before the end (broken pipe); the output is incomplete", file=sys.stderr)
        return 141
    except KeyboardInterrupt:
        return 130
    if program_replay:
        gc.freeze()  # the process ends next: see above
    return status


def _import_for_replay() -> None:
    """Import what a replay runs (the protocol's models, the rulesets' code, the engine: ~70,000 objects the
    collector tracks, which live as long as the process) with the collector off, then freeze them: no collection
    walks them, during the imports (~10 passes over a growing heap: ~10 ms of CPU) nor in the replay after."""
    gc.disable()
    try:
        from . import replay, warmup  # noqa: F401

        warmup.load()
    finally:
        gc.freeze()
        gc.enable()


def _run(args: argparse.Namespace) -> int:
    if args.command == "serve":
        return _serve(args)
    if args.command == "replay":
        return _replay(args)
    if args.command == "secret":
        return _secret(args)
    if args.command == "log":
        return run_log_command(args)
    if args.command == "traveller":
        return _encounter_range(args)
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(svg_path=args.svg, locale=args.locale, log_dir=args.keep_log)
    raise AssertionError(args.command)  # pragma: no cover - argparse requires a command


def _serve(args: argparse.Namespace) -> int:
    from .access import load_world_secrets

    data_dir = data_dir_from(args.data_dir)
    ensure_writable(data_dir)
    world_secrets = load_world_secrets(data_dir)
    for pair in args.world_secret:
        world, sep, value = pair.partition("=")
        if not sep or not world or not value:
            print(f"sightline serve: --world-secret takes WORLD=SECRET, not {pair!r}", file=sys.stderr)
            return 2
        world_secrets[world] = value
    public_url = args.public_url or None
    if public_url is not None and not public_url.lower().startswith(("http://", "https://")):
        print(f"sightline serve: --public-url takes http://… or https://…, not {public_url!r}", file=sys.stderr)
        return 2
    given = args.secret or os.environ.get("SIGHTLINE_SECRET")
    secret_from = None if not given else "--secret" if args.secret else "SIGHTLINE_SECRET"
    secret = given or stored_secret(data_dir) or ""  # none yet: made once the port is open (bridge.startup)
    config = BridgeConfig(
        host=args.host,
        port=args.port,
        data_dir=data_dir,
        secret=secret,
        secret_from=secret_from,
        secret_command=_secret_command(args.data_dir, data_dir),
        public_url=public_url,
        trusted_proxies=tuple(args.trusted_proxy),
        auth_free_failures=args.auth_free_failures,
        auth_max_delay=args.auth_max_delay,
        world_secrets=world_secrets,
        database=args.database,
        session_idle_minutes=args.session_idle,
        log_wait=args.log_wait,
        log_wait_failing=args.log_wait_failing,
        certfile=Path(args.certfile) if args.certfile else None,
        keyfile=Path(args.keyfile) if args.keyfile else None,
        allowed_origins=tuple(args.allow_origin),
        max_frame_bytes=args.max_frame_bytes,
        messages_per_second=args.messages_per_second,
        message_burst=args.message_burst,
        bytes_per_second=args.bytes_per_second,
        inline_ms=args.inline_ms,
        max_nesting=args.max_nesting,
        max_connections_per_world=args.max_connections_per_world,
        hello_timeout=args.hello_timeout,
        send_queue=args.send_queue,
        send_queue_bytes=args.send_queue_bytes,
        send_timeout=args.send_timeout,
        header_timeout=args.header_timeout,
        max_connections=args.max_connections,
        drain_timeout=args.drain_timeout,
        world_linger=args.world_linger,
        heartbeat=args.heartbeat,
        compress=args.ws_compress,
        max_regions=args.max_regions,
        max_tokens=args.max_tokens,
        max_walls=args.max_walls,
        max_lights=args.max_lights,
        max_levels=args.max_levels,
        max_vertices=args.max_vertices,
        max_ring_vertices=args.max_ring_vertices,
        max_scenes_per_world=args.max_scenes_per_world,
        max_watches_per_connection=args.max_watches_per_connection,
        max_watch_pairs=args.max_watch_pairs,
        max_world_watch_pairs=args.max_world_watch_pairs,
        max_watch_tests=args.max_watch_tests,
        max_best_line_tests=args.max_best_line_tests,
        max_log_record_bytes=args.max_log_record_bytes,
        max_option_values=args.max_option_values,
    )

    def announce(line: str) -> None:
        print(line, flush=True)

    import asyncio  # here, not at the top: `sightline replay` and `log` never run an event loop
    import threading

    from .startup import serve  # listens first, then builds the bridge behind the open port
    from .workers import one_malloc_arena

    one_malloc_arena()  # before any thread: a dropped world's memory can then be given back (workers.py)

    asyncio.run(serve(config, announce=announce))
    if any(thread.name.startswith("sightline-world:") for thread in threading.enumerate()):
        # A world's worker is still inside a computation: it holds nothing that needs saving (the log
        # is closed), so the process ends now rather than when the computation would.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0


def _encounter_range(args: argparse.Namespace) -> int:
    import json

    from .core.rules.traveller import explain_encounter_range

    light = args.light if args.light == "day" else int(args.light)
    try:
        result = explain_encounter_range(
            args.base, light=light, weather=args.weather, woods=args.woods, locale=args.locale
        )
    except ValueError as exc:
        print(f"sightline traveller encounter-range: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({"range": result.range, "steps": result.steps, "citations": result.citations}))
    else:
        print("\n".join(result.steps))
        for citation in result.citations:
            print(f"  — {citation}")
    return 0


def _secret_command(option: str | None, data_dir: Path) -> str:
    """The command that shows this data directory's secret: ``sightline secret``, with ``--data-dir`` when
    the directory was chosen (by ``--data-dir`` or ``SIGHTLINE_DATA_DIR``) rather than the default."""
    if not (option or os.environ.get("SIGHTLINE_DATA_DIR")):
        return "sightline secret"
    import shlex

    return f"sightline secret --data-dir {shlex.quote(str(data_dir))}"


def _secret(args: argparse.Namespace) -> int:
    from .access import WORLDS_FILE, world_secret

    data_dir = data_dir_from(args.data_dir)
    if args.world:
        secret, made = world_secret(data_dir, args.world)
        print(secret)
        if made:  # a mistyped world id would otherwise make a secret that opens nothing, in silence
            print(
                f"sightline secret: made a new secret for the world {args.world!r} (it had none), kept in"
                f" {data_dir / WORLDS_FILE}; a world is named by its id, its folder's name under Foundry's Data/worlds",
                file=sys.stderr,
            )
        return 0
    secret, made = ensure_secret(data_dir)
    print(secret)
    if made:  # on standard error: `$(sightline secret)` still reads the secret alone
        print(
            f"sightline secret: made a new secret ({data_dir} had none), kept in {data_dir / SECRET_FILE}"
            " for `sightline serve`",
            file=sys.stderr,
        )
    return 0


def _replay(args: argparse.Namespace) -> int:
    from .replay import run_replay

    if args.file == "-":
        return run_replay(sys.stdin.buffer, sys.stdout, sys.stderr, name="standard input")
    try:
        with open(args.file, "rb") as source:
            return run_replay(source, sys.stdout, sys.stderr, name=args.file)
    except OSError as exc:
        print(f"sightline replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
