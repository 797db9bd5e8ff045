"""The bridge's network side: one aiohttp application on one port.

``/ws`` pumps text frames through a :class:`~bridge.session.Session` per connection and carries out its
effects; ``/healthz`` answers anonymously. Everything else the HTTP side offers is mounted here too.
This module adds no rules and keeps no scene state of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import WSCloseCode, WSMsgType, web

from . import __version__
from .config import BridgeConfig, secret_matches
from .errors import InvalidMessage
from .log.effects import LogStoreLike, perform
from .protocol import encode
from .session import Close, Limits, Send, Session, StoreThenSend, Worlds, error_message

__all__ = ["BRIDGE", "BridgeState", "create_app", "run_bridge", "serve"]


@dataclass
class BridgeState:
    """What every connection of this process shares."""

    config: BridgeConfig
    worlds: Worlds
    store: LogStoreLike | None
    sockets: weakref.WeakSet[web.WebSocketResponse]

    def authenticate(self, world: str, secret: str | None) -> bool:
        return secret_matches(self.config.secret, secret)


BRIDGE = web.AppKey("bridge", BridgeState)


# --- Routes ---------------------------------------------------------------------------------------


async def healthz(request: web.Request) -> web.Response:
    state = request.app[BRIDGE]
    return web.json_response(
        {"status": "ok", "version": __version__, "worlds": len(state.worlds.worlds), "connections": len(state.sockets)}
    )


async def websocket(request: web.Request) -> web.WebSocketResponse:
    state = request.app[BRIDGE]
    ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=state.config.max_frame_bytes * 4)
    await ws.prepare(request)
    state.sockets.add(ws)
    session = Session(
        state.worlds,
        authenticate=state.authenticate,
        limits=Limits(max_frame_bytes=state.config.max_frame_bytes),
    )
    try:
        async for msg in ws:
            if msg.type == WSMsgType.TEXT:
                effects = session.receive(msg.data)
            elif msg.type == WSMsgType.BINARY:
                error = InvalidMessage("binary frames are not part of the protocol; send JSON text frames")
                effects = [Send(error_message(error))]
            else:
                break
            if not await _carry_out(effects, ws, state):
                break
    finally:
        state.sockets.discard(ws)
    return ws


async def _carry_out(effects: list[Any], ws: web.WebSocketResponse, state: BridgeState) -> bool:
    """Do what the session asked; return False once the connection is to be closed."""
    for effect in effects:
        if isinstance(effect, Send):
            await ws.send_str(encode(effect.message))
        elif isinstance(effect, StoreThenSend):
            await ws.send_str(encode(await perform(effect, state.store)))
        elif isinstance(effect, Close):
            await ws.close(code=effect.code, message=effect.reason.encode())
            return False
    return True


# --- Application ----------------------------------------------------------------------------------


def create_app(config: BridgeConfig, *, store: LogStoreLike | None = None) -> web.Application:
    """The bridge application (sync factory): routes, shared state, clean shutdown."""
    app = web.Application()
    app[BRIDGE] = BridgeState(config=config, worlds=Worlds(), store=store, sockets=weakref.WeakSet())
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/ws", websocket)
    app.on_shutdown.append(_close_sockets)
    return app


async def _close_sockets(app: web.Application) -> None:
    """Clients are told the bridge is going away (1001), not dropped."""
    for ws in list(app[BRIDGE].sockets):
        with contextlib.suppress(Exception):
            await ws.close(code=WSCloseCode.GOING_AWAY, message=b"bridge shutting down")


@contextlib.asynccontextmanager
async def run_bridge(config: BridgeConfig, *, store: LogStoreLike | None = None) -> AsyncIterator[tuple[str, int]]:
    """Start the bridge and yield the ``(host, port)`` it listens on (``port=0`` picks a free one)."""
    app = create_app(config, store=store)
    runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=5.0)
    await runner.setup()
    site = web.TCPSite(runner, config.host, config.port)
    await site.start()
    server = site._server
    assert server is not None
    sockets = getattr(server, "sockets", None) or []
    host, port = sockets[0].getsockname()[:2] if sockets else (config.host, config.port)
    try:
        yield host, port
    finally:
        await runner.cleanup()


async def serve(config: BridgeConfig, *, store: LogStoreLike | None = None, announce: Callable[[str], None]) -> None:
    """Run until SIGINT or SIGTERM, then close every client with 1001 and stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with run_bridge(config, store=store) as (host, port):
        shown = f"[{host}]" if ":" in host else host
        announce(f"Sightline bridge {__version__} listening on ws://{shown}:{port}/ws")
        announce(f"Health check: http://{shown}:{port}/healthz")
        announce(f"Secret (paste into Foundry's Sightline settings): {config.secret}")
        announce(f"Data directory: {config.data_dir}")
        await stop.wait()
        announce("Shutting down: closing connections")
