"""``bench.replay_vs`` times ``sightline replay`` of recorded games on two sides and diffs their answers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.replay_vs import answer_diff, ratios


def test_a_self_comparison_replays_the_game_and_finds_the_same_answers(tmp_path: Path) -> None:
    """A self-comparison's cheap run writes the game, replays it both ways and finds equal answers.

    With this interpreter on both sides (``--old-python``: no old checkout built), it replays the game through the real
    ``sightline replay`` and in process.
    """
    command = [sys.executable, "-m", "bench.replay_vs", "--quick", "--games", "cards", "--rounds", "1", "--json"]
    done = subprocess.run(
        [*command, "--old-python", sys.executable, "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    report = json.loads(done.stdout.splitlines()[-1])
    assert set(report["results"]) == {"cards"}
    assert report["old"]["versions"]["bridge"] == report["new"]["versions"]["bridge"]
    for name, result in report["results"].items():
        lines = len((tmp_path / f"{name}.jsonl").read_text(encoding="utf-8").splitlines())
        assert result["diff"] == {"answers": [lines, lines], "differing": 0, "text_only": 0, "paths": []}
        assert result["deterministic"] == {"old": True, "new": True}
        assert result["errors"] == {"old": 0, "new": 0}
        assert all(
            result[key]["old"]["best"] > 0 and result[key]["new"]["best"] > 0 for key in ("cpu_s", "alone_cpu_s")
        )
        alone = (tmp_path / f"{name}.new.alone.jsonl").read_bytes()
        assert alone == (tmp_path / f"{name}.new.answers.jsonl").read_bytes()  # the in-process replay is the CLI's


def test_the_diff_counts_each_differing_field_by_path_with_a_first_example() -> None:
    """Lines that differ are counted per field path (list indices folded), lines equal as JSON only apart."""
    old = [
        json.dumps({"type": "adjudication", "ruling": {"mod": -3, "reasons": [{"text": "a"}, {"text": "b"}]}}),
        json.dumps({"type": "adjudication", "ruling": {"mod": 0, "reasons": []}}),
        '{"type": "pong", "id": "x"}',
    ]
    new = [
        json.dumps({"type": "adjudication", "ruling": {"mod": -3, "reasons": [{"text": "A"}, {"text": "B"}]}}),
        json.dumps({"type": "adjudication", "ruling": {"mod": 0, "reasons": []}, "engine": True}),
        '{"id": "x", "type": "pong"}',
    ]
    diff = answer_diff(old, new)
    assert diff["differing"] == 2 and diff["text_only"] == 1
    assert diff["paths"] == [
        {"path": "adjudication .ruling.reasons[].text", "count": 2, "answer": 1, "old": "a", "new": "A"},
        {"path": "adjudication .engine", "count": 1, "answer": 2, "old": "<absent>", "new": True},
    ]


def test_ratios_pair_each_old_round_with_the_new_one_run_beside_it() -> None:
    """Each round's old time is divided by the same round's new time, not by the new median.

    A machine that slows both sides in one round leaves that round's ratio alone.
    """
    row = ratios([20.0, 40.0, 30.0], [2.0, 2.5, 4.0])
    assert row["ratio_median"] == 30.0 / 2.5 and row["ratio_best"] == 20.0 / 2.0
    assert row["ratio_rounds"] == {"median": 10.0, "low": 7.5, "high": 16.0}  # 20/2, 40/2.5, 30/4
