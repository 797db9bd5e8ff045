"""Over a real WebSocket on port 0: what the bridge holds but will not use is listed in scene.synced and, once,
in scene.patched — reasons in the scene's locale."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bridge.config import BridgeConfig
from bridge.server import run_bridge
from tests.scenes import rect_region, scene, token

SECRET = "table-secret"


@pytest.fixture
async def bridge(tmp_path: Path) -> AsyncIterator[str]:
    """A real bridge on 127.0.0.1, a free port; yields its host:port."""
    config = BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET)
    async with run_bridge(config) as (host, port):
        yield f"{host}:{port}"


async def ask(ws: ClientConnection, message: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(message))
    return json.loads(await ws.recv())


async def test_ignored_things_are_listed_over_a_real_websocket(bridge: str) -> None:
    """Over a real WebSocket, what a Spanish Traveller scene cannot use is listed at sync and after each patch.

    A smoke without density is listed at sync; a patch giving it one lists it used; a patch that moves a token with a
    foreign trait lists nothing again.
    """
    data = scene(
        ruleset="traveller",
        locale="es",
        regions=[{**rect_region("r-smoke", "smoke", 450, 350, 100, 200), "name": "Cortina"}],
        tokens=[token("a", 0, 400, "dark-vision"), token("t", 1000, 400)],
    )
    async with connect(f"ws://{bridge}/ws") as ws:
        hello = {"type": "hello", "protocol": 1, "world": "w-ashes", "secret": SECRET}
        assert (await ask(ws, hello))["type"] == "welcome"
        synced = await ask(ws, {"type": "scene.sync", "id": "q1", "scene": data})
        assert [(e.get("region") or e.get("token"), e["cause"]) for e in synced["ignored"]] == [
            ("r-smoke", "missing-parameter"),
            ("a", "foreign-traits"),
        ]
        assert synced["ignored"][0]["reason"].startswith("Cortina: una zona de tipo Humo necesita una densidad de humo")
        fixed = {**rect_region("r-smoke", "smoke", 450, 350, 100, 200, density=2), "name": "Cortina"}
        moved = token("a", 0, 300, "dark-vision")
        patched = await ask(
            ws, {"type": "scene.patch", "id": "q2", "scene": "s1", "upsert": {"regions": [fixed], "tokens": [moved]}}
        )
        assert patched == {"type": "scene.patched", "id": "q2", "scene": "s1", "used": [{"region": "r-smoke"}]}
