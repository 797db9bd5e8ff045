"""`sightline serve` opens its port before it imports the bridge: /healthz answers meanwhile, every other
request waits for the application and is then served as if it had just arrived."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import aiohttp

from bridge.config import BridgeConfig
from bridge.server import running_app
from bridge.startup import _early_health, listening

SECRET = "startup-secret"

#: Modules `serve` needs only behind its open port: the web framework, the protocol's pydantic models,
#: the rulesets (their TOML data and its validation), the log store, NumPy and the engine (its compiled loops).
HEAVY = [
    "aiohttp",
    "pydantic",
    "numpy",
    "bridge.core.meetings",
    "bridge.server",
    "bridge.protocol",
    "bridge.session",
    "bridge.core.rules",
    "bridge.log.store",
    "bridge.log.export",
    "bridge.core.visibility",
]

# A fresh interpreter runs `sightline serve` through the command line's own `main`. At the first line it
# prints ("listening on …") it connects to the port (it must be open) and notes which heavy modules are
# imported, then asks the bridge to stop (SIGTERM) — while the bridge is still loading behind its port.
_AT_LISTEN = """
import json, os, signal, socket, sys
from bridge.cli import main

HEAVY = json.loads(sys.argv[1])
seen = {}

class Watch:
    def __init__(self, out):
        self.out = out
    def write(self, text):
        if "listening on" in text and not seen:
            port = int(text.rsplit(":", 1)[1].split("/")[0])
            socket.create_connection(("127.0.0.1", port), timeout=30).close()
            seen["imported"] = [name for name in HEAVY if name in sys.modules]
            os.kill(os.getpid(), signal.SIGTERM)
        return self.out.write(text)
    def flush(self):
        self.out.flush()

real = sys.stdout
sys.stdout = Watch(real)
status = main(["serve", "--port", "0", "--data-dir", sys.argv[2], "--secret=startup-secret"])
sys.stdout = real
print(json.dumps({"status": status, **seen}))
"""


def test_serve_opens_its_port_before_importing_the_heavy_parts(tmp_path: Path) -> None:
    """`sightline serve` opens its port before importing the heavy parts; stopped while it loads, it exits cleanly.

    When it says it listens (and the port takes a connection), none of aiohttp, pydantic, NumPy, the engine, the
    protocol, the session, the rules or the log store is imported yet.
    """
    ran = subprocess.run(
        [sys.executable, "-c", _AT_LISTEN, json.dumps(HEAVY), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout.splitlines()[-1])
    assert result == {"status": 0, "imported": []}, ran.stdout


async def test_healthz_answers_while_loading_and_a_held_client_is_served_once_ready(tmp_path: Path) -> None:
    """While the bridge loads, /healthz answers and a WebSocket client is held; once ready, that client is welcomed.

    Behind a port opened before the application exists, GET /healthz answers ("app": "loading", the same fields as
    later), a WebSocket client waits (held, not refused); once the application is given to the gate, that client's hello
    is welcomed and /healthz says "ready".
    """
    config = replace(BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET), log=False)
    async with listening(config, early=_early_health(config)) as (gate, _server, host, port):
        base = f"http://{host}:{port}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as response:
                assert response.status == 200
                early = await response.json()
            assert early["status"] == "ok" and early["app"] == "loading" and early["app_seconds"] is None
            assert early["worlds"] == 0 and early["log"] is False

            waiting = asyncio.ensure_future(http.ws_connect(f"{base}/ws"))
            for _ in range(200):
                if gate.held:
                    break
                await asyncio.sleep(0.01)
            assert gate.held == 1 and not waiting.done()

            async with running_app(config) as runner:
                assert runner.server is not None
                gate.open_to(runner.server)
                ws = await asyncio.wait_for(waiting, timeout=60)
                await ws.send_json({"type": "hello", "protocol": 1, "world": "w", "secret": SECRET})
                assert (await ws.receive_json())["type"] == "welcome"
                async with http.get(f"{base}/healthz") as response:
                    ready = await response.json()
                await ws.close()
    assert ready["app"] == "ready" and ready["connections"] == 1
    assert set(early) == set(ready)


async def test_a_held_connection_is_closed_when_the_application_never_comes(tmp_path: Path) -> None:
    """A client held while the bridge loads is closed, not left hanging, when start-up ends without an application.

    That is a failed log store, or a stop while loading.
    """
    config = replace(BridgeConfig(host="127.0.0.1", port=0, data_dir=tmp_path, secret=SECRET), log=False)
    async with listening(config, early=_early_health(config)) as (gate, _server, host, port):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"GET /log/ HTTP/1.1\r\nHost: bridge\r\n\r\n")
        await writer.drain()
        for _ in range(200):
            if gate.held:
                break
            await asyncio.sleep(0.01)
        assert gate.held == 1
    assert await asyncio.wait_for(reader.read(), timeout=10) == b""
    writer.close()
