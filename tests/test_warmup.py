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
    and says the engine is still compiling: the port did not wait for the compilation."""
    with serving(tmp_path, NUMBA_CACHE_DIR=str(tmp_path / "empty-cache")) as port:
        first = healthz(port)
    assert first["status"] == "ok"
    assert first["engine"] == "compiling" and first["engine_seconds"] is None


def test_healthz_reports_the_engine_ready_once_loaded(tmp_path: Path) -> None:
    """With numba's cache filled, the engine becomes ready in the background and /healthz says so."""
    with serving(tmp_path) as port:
        deadline = time.monotonic() + 300
        answer = healthz(port)
        while answer["engine"] == "compiling" and time.monotonic() < deadline:
            time.sleep(0.05)
            answer = healthz(port)
    assert answer["engine"] == "ready"
    assert isinstance(answer["engine_seconds"], float) and answer["engine_seconds"] > 0
