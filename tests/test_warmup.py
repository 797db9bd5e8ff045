"""`sightline serve` through the real console script: /healthz answers before the engine is loaded, and the engine's
loops come compiled ahead of time (nothing is compiled when the bridge starts)."""

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
def serving(tmp_path: Path, **env: str) -> Iterator[tuple[int, int]]:
    """A real bridge on a free port (its data in ``tmp_path``); yields its port and process id once it says
    it listens."""
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
                yield int(line.rsplit(":", 1)[1].split("/")[0]), process.pid
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


def test_healthz_reports_the_engine_ready_with_its_loops_compiled_and_no_jit_loaded(tmp_path: Path) -> None:
    """/healthz answers ok at once, then reports the engine ready with its loops compiled; no JIT is loaded.

    The application, then the engine, become ready behind it and /healthz says so; the bridge process maps the loops'
    extension and no run-time compiler (numba, llvmlite) at all.
    """
    with serving(tmp_path) as (port, pid):
        first = healthz(port)
        deadline = time.monotonic() + 120
        answer = first
        while answer["engine"] in ("not started", "loading") and time.monotonic() < deadline:
            time.sleep(0.05)
            answer = healthz(port)
        maps = Path(f"/proc/{pid}/maps").read_text()
    assert first["status"] == "ok" and first["engine"] in ("not started", "loading", "ready")
    assert answer["app"] == "ready" and answer["engine"] == "ready" and answer["engine_compiled"] is True
    assert isinstance(answer["engine_seconds"], float) and answer["engine_seconds"] > 0
    assert "/bridge/core/_loops." in maps
    assert "llvmlite" not in maps and "numba" not in maps


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
    """An ``adjudicate`` never waits for the engine to load; ``sightline replay`` loads it up front.

    In a process that never loads the engine (``sightline demo``), an ``adjudicate`` is answered by the per-pair path
    and does not import (compile) it; ``sightline replay`` loads it before its first line.
    """
    ran = subprocess.run(
        [sys.executable, "-c", _NEVER_LOADED], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1]
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["after adjudicate: False", "after replay: True"]
