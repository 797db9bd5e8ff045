"""``sightline serve``: the port opens first, the bridge is built behind it.

Importing the bridge — aiohttp, the protocol's pydantic models, the rulesets and their TOML data, the
log store — costs about a second of CPU, and much more wall time on a busy machine; the engine's
compiled loops come on top (:mod:`bridge.warmup`). None of it is needed to say "alive". So
:func:`serve` imports only the standard library and three small modules of the bridge (this one,
:mod:`bridge.config`, :mod:`bridge.gate`) before it listens. Then, while :class:`~bridge.gate.Gate`
answers ``GET /healthz`` itself (``"app": "loading"``) and holds every other connection (its request
read, not answered):

1. a thread imports :mod:`bridge.server` and the log stores (never the event loop: an import inside a
   request would stall every world's pings);
2. the loop opens (and migrates) the log store and builds the aiohttp application, exactly as
   :func:`bridge.server.run_bridge` does;
3. the gate hands the application every held connection and every new one (``"app": "ready"``);
4. the engine's loops are loaded in the background (:func:`bridge.warmup.start`).

If step 1 or 2 fails (the database cannot be opened), the bridge closes its port and exits with the
same one-line error as before it listened early. ``tests/test_startup.py`` proves what is imported
when the port opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import faulthandler
import gc
import json
import signal
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from . import __version__, warmup
from .config import BridgeConfig, StartupError, ensure_secret
from .gate import AcceptErrorLog, Gate, connection_cap

if TYPE_CHECKING:
    import ssl

__all__ = ["HEAVY", "app_status", "listening", "serve", "ssl_context"]

#: What the bridge imports behind its open port (``tests/test_startup.py`` checks none is imported sooner).
HEAVY = ("bridge.server", "bridge.log.sqlite", "bridge.log.postgres")

_app_seconds: float | None = None


def app_status(ready: bool) -> dict[str, object]:
    """``/healthz``'s account of the application: ``"app"`` is ``"loading"`` while only ``/healthz`` is
    answered (other requests wait), then ``"ready"``; ``app_seconds`` is how long it took from the port
    opening (``None`` while loading, and for a bridge started in one step by ``run_bridge``)."""
    return {
        "app": "ready" if ready else "loading",
        "app_seconds": None if _app_seconds is None else round(_app_seconds, 3),
    }


def _early_health(config: BridgeConfig) -> Callable[[str, str], bytes | None]:
    """The gate's answer while the application loads: ``GET``/``HEAD /healthz`` (the fields of
    :func:`bridge.server.healthz`: no world, no connection yet; ``log`` whether one is configured)."""

    def answer(method: str, target: str) -> bytes | None:
        path = target.partition("?")[0]
        if path != "/healthz" or method not in ("GET", "HEAD"):
            return None
        body = json.dumps(
            {
                "status": "ok",
                "version": __version__,
                "worlds": 0,
                "connections": 0,
                "log": config.log,
                **warmup.status(),
                **app_status(False),
            }
        ).encode()
        head = (
            "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n"
        ).encode()
        return head if method == "HEAD" else head + body

    return answer


def ssl_context(config: BridgeConfig) -> ssl.SSLContext | None:
    """TLS from ``--certfile``/``--keyfile`` (so the module can use ``wss://``), or ``None``;
    :class:`StartupError` naming the file when it is missing or not a certificate and key."""
    if config.certfile is None:
        return None
    import ssl

    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    for option, path in (("--certfile", config.certfile), ("--keyfile", config.keyfile)):
        if path is not None and not path.is_file():
            raise StartupError(f"{option} {path}: no such file")
    try:
        context.load_cert_chain(str(config.certfile), str(config.keyfile) if config.keyfile else None)
    except (ssl.SSLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or getattr(exc, "strerror", None) or str(exc)
        given = f"{config.certfile}" + (f" and {config.keyfile}" if config.keyfile else "")
        raise StartupError(
            f"cannot use the TLS certificate {given}: {reason} (PEM certificate and key expected)"
        ) from exc
    return context


def _listen_error(config: BridgeConfig, exc: OSError) -> StartupError:
    """What a person can do about a port that cannot be opened."""
    where = f"{config.host}:{config.port}"
    if isinstance(exc, socket.gaierror):
        return StartupError(
            f"cannot listen on --host {config.host!r}: {exc.strerror or exc} (give an address of this machine)"
        )
    if exc.errno == errno.EADDRINUSE:
        return StartupError(
            f"port {config.port} on {config.host} is already in use (another bridge running?);"
            " stop it or choose another --port"
        )
    if exc.errno == errno.EADDRNOTAVAIL:
        return StartupError(f"cannot listen on {config.host}: not an address of this machine")
    if exc.errno == errno.EACCES:
        return StartupError(
            f"not allowed to listen on {where} (ports below 1024 need privileges); choose another --port"
        )
    return StartupError(f"cannot listen on {where}: {exc.strerror or exc}")


@contextlib.asynccontextmanager
async def listening(
    config: BridgeConfig,
    factory: Callable[[], asyncio.Protocol] | None = None,
    *,
    early: Callable[[str, str], bytes | None] | None = None,
) -> AsyncIterator[tuple[Gate, asyncio.Server, str, int]]:
    """Open the port behind a :class:`Gate` to ``factory`` (or holding connections until
    :meth:`Gate.open_to`); yields the gate, the server and the ``(host, port)`` it listens on
    (``port=0`` picks a free one). On the way out it stops listening and closes held connections."""
    gate = Gate(factory, cap=connection_cap(config.max_connections), header_timeout=config.header_timeout, early=early)
    loop = asyncio.get_running_loop()
    accept_errors = AcceptErrorLog()
    accept_errors.install(loop)
    try:
        server = await loop.create_server(
            gate, config.host, config.port, ssl=ssl_context(config),
            ssl_handshake_timeout=config.header_timeout if config.certfile else None,
        )  # fmt: skip
    except BaseException as exc:
        accept_errors.uninstall(loop)
        if isinstance(exc, OSError):
            raise _listen_error(config, exc) from exc
        raise
    sockets: list[Any] = list(server.sockets or ())
    host, port = sockets[0].getsockname()[:2] if sockets else (config.host, config.port)
    try:
        yield gate, server, host, port
    finally:
        server.close()
        gate.drop_held()
        accept_errors.uninstall(loop)


def _import_behind_the_port() -> None:
    """In a worker thread: the modules the application needs (the log stores too: opening one imports
    its module, which must not happen on the loop)."""
    import importlib

    for name in HEAVY:
        importlib.import_module(name)


async def _in_thread(work: Callable[[], Any]) -> Any:
    """``work()`` in a daemon thread (one that is still importing never holds up the process's exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()

    def settle(result: Any, exc: BaseException | None) -> None:
        if not done.done():
            done.set_result(result) if exc is None else done.set_exception(exc)

    def run() -> None:
        result, error = None, None
        try:
            result = work()
        except BaseException as exc:  # handed to the loop, raised there
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: the process is ending
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="sightline-startup", daemon=True).start()
    return await done


async def serve(config: BridgeConfig, *, announce: Callable[[str], None]) -> None:
    """Listen, then build the bridge behind the open port; run until SIGINT or SIGTERM, then close
    every client with 1001 and stop. :class:`StartupError` if the bridge cannot be built."""
    try:
        await _serve(config, announce=announce)
    finally:
        faulthandler.cancel_dump_traceback_later()


async def _serve(config: BridgeConfig, *, announce: Callable[[str], None]) -> None:
    global _app_seconds
    _app_seconds = None
    ready = False
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with listening(config, early=_early_health(config)) as (gate, server, host, port):
        opened = time.perf_counter()
        if not config.secret and config.secret_from is None:
            # Made only now that the port is open: a start that could not listen made none, so the first
            # start that does is the one that makes it, and prints it.
            secret, made = ensure_secret(config.data_dir)
            config = dataclasses.replace(config, secret=secret, secret_is_new=made)
        shown = f"[{host}]" if ":" in host else host
        scheme = "wss" if config.certfile else "ws"
        http = "https" if config.certfile else "http"
        announce(f"Sightline bridge {__version__} listening on {scheme}://{shown}:{port}/ws")
        announce(f"Health check: {http}://{shown}:{port}/healthz")
        if config.secret_is_new:
            announce(f"Secret (new, paste into Foundry's Sightline settings): {config.secret}")
            announce(f"The secret is printed only now, when it is made; `{config.secret_command}` shows it again")
        elif config.secret_from is not None:
            announce(f"The secret is the one given with {config.secret_from} (none was made or stored)")
        else:
            announce(f"The secret is not printed at every start; `{config.secret_command}` shows it")
        announce(f"Data directory: {config.data_dir}")

        async def run() -> None:
            global _app_seconds
            nonlocal ready
            await _in_thread(_import_behind_the_port)
            from . import server as bridge  # imported by now: nothing left to do on the loop
            from .collector import IdleCollector

            collector = IdleCollector()
            try:
                async with bridge.running_app(config, collector=collector) as runner:
                    assert runner.server is not None
                    state = runner.app[bridge.BRIDGE]
                    # What start-up made is frozen, never scanned again. Automatic collection ran while it
                    # was made, so it is frozen as it is: a full pass over it here would stall the loop
                    # (0.05 s of CPU), and collector.start() then scans only what is not frozen.
                    gc.freeze()
                    collector.start()
                    gate.open_to(runner.server)
                    _app_seconds = time.perf_counter() - opened
                    ready = True
                    warmup.start()  # the engine's compiled loops, now that the bridge answers
                    if config.log:
                        where = bridge.describe_database(config.database, config.data_dir)  # no password
                        announce(f"Log: {where}; browse it at {http}://{shown}:{port}/log/")
                    await stop.wait()
                    announce("Shutting down: closing connections")
                    # Whatever a world's worker is computing, the process ends within the drain timeout: a
                    # watchdog thread outside the interpreter (it needs no GIL) exits if the orderly way has not.
                    faulthandler.dump_traceback_later(config.drain_timeout, exit=True)
                    server.close()
                busy = sorted(name for name, worker in state.workers.items() if worker.busy_since is not None)
                if busy:  # its answer would reach nobody: the clients were told 1001
                    worlds = "world" if len(busy) == 1 else "worlds"
                    announce(f"Stopped without waiting for the computation under way ({worlds} {', '.join(busy)})")
            finally:
                collector.stop()

        running = asyncio.ensure_future(run())
        stopping = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not running.done() and not ready:  # stopped while loading: nothing to drain
                running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        finally:
            stopping.cancel()
