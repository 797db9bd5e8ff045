"""`sightline serve` through the real console script answers /healthz before the engine's loops are compiled."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SIGHTLINE = str(Path(sys.executable).parent / "sightline")


@contextmanager
def serving(tmp_path: Path, **env: str) -> Iterator[int]:
    """A real bridge on a free port (its data in ``tmp_path``); yields the port once it says it listens."""
    process = subprocess.Popen(
        [SIGHTLINE, "serve", "--port", "0", "--data-dir", str(tmp_path / "data"), "--secret=s3cret-for-tests"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, **env},
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "listening on" in line:
                yield int(line.rsplit(":", 1)[1].split("/")[0])
                break
        else:
            raise AssertionError("the bridge exited before listening")
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def healthz(port: int) -> dict[str, object]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as response:
        return dict(json.loads(response.read()))


def test_healthz_answers_while_the_engine_compiles(tmp_path: Path) -> None:
    """With numba's cache empty (the loops must be compiled, seconds of work), /healthz already answers ok
    and, once the rest of the bridge is loaded, says the engine is still compiling: neither the port nor
    the application waited for the compilation."""
    with serving(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache")) as port:
        first = healthz(port)
        answer = first
        while answer["app"] == "loading":
            time.sleep(0.02)
            answer = healthz(port)
    assert first["status"] == "ok" and first["engine"] in ("not started", "compiling")
    assert answer["app"] == "ready" and answer["engine"] == "compiling" and answer["engine_seconds"] is None


def test_healthz_reports_the_engine_ready_once_loaded(tmp_path: Path) -> None:
    """With numba's cache filled, the engine becomes ready in the background and /healthz says so."""
    with serving(tmp_path) as port:
        deadline = time.monotonic() + 300
        answer = healthz(port)
        while answer["engine"] in ("not started", "compiling") and time.monotonic() < deadline:
            time.sleep(0.05)
            answer = healthz(port)
    assert answer["engine"] == "ready"
    assert isinstance(answer["engine_seconds"], float) and answer["engine_seconds"] > 0


_NEVER_LOADED = """
import json, sys
from bridge.protocol import dump_message
from bridge.replay import replay_lines
from bridge.session import Session, Worlds, Send
from tests.scenes import rect_region, scene, token

field = scene(regions=[rect_region("dark", "low", 300, 0, 100, 400)], tokens=[token("a", 0, 100), token("b", 900, 100)])
ask = {"type": "adjudicate", "id": "q", "scene": "s1", "actor": "a", "target": "b", "action": "bs-attack", "log": False}
session = Session(Worlds(), offline=True)
session.receive(json.dumps({"type": "scene.sync", "id": "s", "scene": field}))
(answer,) = session.receive(json.dumps(ask))
assert isinstance(answer, Send) and dump_message(answer.message)["type"] == "adjudication", answer
print("after adjudicate:", "bridge.core.visibility" in sys.modules)
list(replay_lines([json.dumps({"type": "scene.sync", "id": "s", "scene": field}), json.dumps(ask)]))
print("after replay:", "bridge.core.visibility" in sys.modules)
"""


def test_a_question_never_waits_for_the_engine_to_load_and_replay_loads_it_up_front() -> None:
    """In a process that never loads the engine (``sightline demo``), an ``adjudicate`` is answered by the
    per-pair path and does not import (compile) it; ``sightline replay`` loads it before its first line."""
    ran = subprocess.run(
        [sys.executable, "-c", _NEVER_LOADED], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1]
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["after adjudicate: False", "after replay: True"]
