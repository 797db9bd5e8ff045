"""``sightline demo`` run as a user runs it: the installed console script, a real bridge, a real socket."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from bridge.demo import SCRIPT, demo_scene

SVG = "{http://www.w3.org/2000/svg}"


@dataclass(frozen=True)
class DemoRun:
    returncode: int
    stdout: str
    stderr: str
    svg: Path

    def row(self, number: int) -> list[str]:
        """The main table row of ruling ``number``, split into its columns."""
        for line in self.stdout.splitlines():
            if re.match(rf"{number}\s", line):
                return re.split(r"\s{2,}", line.strip())
        raise AssertionError(f"no row {number} in:\n{self.stdout}")

    def block(self, number: int) -> str:
        """Everything printed for ruling ``number`` (row, candidates, notes), runs of whitespace made one space."""
        lines = self.stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if re.match(rf"{number}\s", line))
        end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
        return " ".join(" ".join(lines[start:end]).split())


def _sightline() -> str:
    beside = Path(sys.executable).parent / "sightline"
    found = str(beside) if beside.exists() else shutil.which("sightline")
    assert found, "the sightline console script is not installed (pip install -e .)"
    return found


def _run(tmp: Path, *args: str) -> DemoRun:
    svg = tmp / "out" / "demo.svg"
    done = subprocess.run(
        [_sightline(), "demo", "--svg", str(svg), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    return DemoRun(done.returncode, done.stdout, done.stderr, svg)


@pytest.fixture(scope="module")
def english(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    return _run(tmp_path_factory.mktemp("demo-en"))


@pytest.fixture(scope="module")
def spanish(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    return _run(tmp_path_factory.mktemp("demo-es"), "--locale", "es")


def test_demo_exits_cleanly_and_says_where_the_svg_went(english: DemoRun) -> None:
    """The demo exits 0, prints nothing on stderr, and names the SVG file it wrote."""
    assert english.returncode == 0, english.stderr
    assert english.stderr == ""
    assert str(english.svg.resolve()) in english.stdout
    assert english.svg.is_file()


def test_every_ruling_matches_the_script(english: DemoRun) -> None:
    """The bridge's answers agree with what the script narrates (no warning line is printed)."""
    assert "warning:" not in english.stdout
    assert english.stdout.count("BS Attack") >= 9


def test_clear_line_has_no_mod(english: DemoRun) -> None:
    """Ruling 1 is a clear line: allowed, MOD 0, no zone crossed."""
    assert english.row(1)[1:] == ["Sol → Ana", "BS Attack", "yes", "clear", "0", "none"]


def test_low_and_poor_do_not_stack(english: DemoRun) -> None:
    """The Low+Poor line shows -6 once: Poor applied, Low's -3 listed as not applied, never -9."""
    row = english.row(2)
    assert row[1:6] == ["Ana → Lin", "BS Attack", "yes", "penalised", "-6"]
    block = english.block(2)
    assert "Low Visibility Zone · Harbour haze: through" in block
    assert "Poor Visibility Zone · Flickering lights: through" in block
    assert "✓ applied -6 Poor Visibility Zone" in block
    assert "✗ not applied -3 Low Visibility Zone" in block
    assert "never stack" in block
    assert "-9" not in block and "-9" not in " ".join(row)  # (not the whole output: its temp path may hold "-9")


@pytest.mark.parametrize(
    ("number", "who", "action", "result", "mod"),
    [
        (3, "Sol → Kai", "BS Attack", "blocked", "—"),  # Zero (smoke) blocks a plain trooper
        (4, "Kai → Sol", "BS Attack", "penalised", "-6"),  # MSV L1 through Zero
        (5, "Sol → Kai", "BS Attack (ARO)", "penalised", "-6"),  # answering through Zero: Poor
        (6, "Kai → Lin", "BS Attack", "blocked", "—"),  # White Noise blocks MSV
        (7, "Lin → Kai", "BS Attack", "clear", "0"),  # … not a plain trooper
        (8, "Vik → Lin", "BS Attack", "blocked", "—"),  # … and Marksmanship (current edition)
        (9, "Vik → Sol", "BS Attack", "blocked", "—"),  # the shed wall
        (10, "Vik → Sol", "Speculative Attack", "penalised", "-6"),  # its own -6, no LoF needed
        (11, "Sol → Kai", "BS Attack", "penalised", "-6"),  # after the move: from Poor
        (12, "Sol (position)", "Combat Jump", "refused", "—"),  # inside a zone
        (13, "Lin (position)", "Combat Jump", "allowed", "0"),
    ],
)
def test_scripted_situations(english: DemoRun, number: int, who: str, action: str, result: str, mod: str) -> None:
    """Each scripted situation prints its actor, action, result and MOD in its table row."""
    row = english.row(number)
    assert row[1:3] == [who, action]
    assert row[4:6] == [result, mod]


def test_zero_and_white_noise_rows_explain_why(english: DemoRun) -> None:
    """Blocked and MSV rulings carry the bridge's reasons under their rows."""
    assert "No LoF can be drawn through a Zero Visibility Zone" in english.block(3)
    assert "Multispectral Visor L1 draws LoF through Zero Visibility at -6" in english.block(4)
    assert "counts as a Poor Visibility Zone (-6)" in english.block(5)
    assert "White Noise acts as a Zero Visibility Zone for Multispectral Visor L1" in english.block(6)
    assert "A wall blocks the line of fire" in english.block(9)


def test_the_patch_changes_the_ruling(english: DemoRun) -> None:
    """The same Sol → Kai attack is blocked by smoke before the scene.patch and -6 from Poor after it."""
    assert re.search(r"Sol moved \d+\.\d inches; the bridge answered scene\.patched", english.stdout)
    assert "(830, 360)" not in english.stdout  # pixels mean nothing at the table
    assert english.row(3)[4] == "blocked"
    assert english.row(11)[4:] == ["penalised", "-6", "Poor Visibility Zone · Flickering lights: from"]


def test_svg_has_one_element_per_zone_and_per_sight_line(english: DemoRun) -> None:
    """The SVG parses as XML with one zone path per zone and one sight-line group per ruling with a line."""
    root = ET.parse(english.svg).getroot()
    assert root.tag == f"{SVG}svg"

    def having(name: str) -> list[ET.Element]:
        return [e for e in root.iter() if name in e.get("class", "").split()]

    zones = having("zone")
    scene = demo_scene("en")
    assert sorted(z.get("data-region", "") for z in zones) == sorted(r["id"] for r in scene["regions"])
    asked = [step for step in SCRIPT if step.move is None]
    with_line = [step for step in asked if step.target is not None]
    lines = having("sight-line")
    assert len(lines) == len(with_line) == 11
    assert len(having("placement")) == len(asked) - len(with_line) == 2
    results = [next(c for c in g.get("class", "").split() if c.startswith("result-")) for g in lines]
    assert results[:3] == ["result-clear", "result-penalised", "result-blocked"]


def test_spanish_demo_speaks_spanish(spanish: DemoRun) -> None:
    """With --locale es the headers, the verdicts and the bridge's own texts are Spanish."""
    assert spanish.returncode == 0, spanish.stderr
    assert "Actor → Objetivo" in spanish.stdout
    assert spanish.row(2)[1:6] == ["Ana → Lin", "Ataque CD", "sí", "penalizada", "-6"]
    assert spanish.row(3)[4] == "bloqueada"
    assert "Los MOD de Zona de Visibilidad no son acumulables" in spanish.block(2)
    assert "Zona de Visibilidad Nula (Humo)" in spanish.block(3)
    assert "Imagen de la escena escrita en" in spanish.stdout
    assert "Infinity N4 (reglamento vigente)" in spanish.stdout.splitlines()[0]


def test_the_demo_names_things_never_by_id(english: DemoRun, spanish: DemoRun) -> None:
    """What the demo prints is for people: the ruleset by its title, actions, zones and tokens by name.

    No id of the vocabulary or the scene, no seed file name, no pixel coordinates.
    """
    assert "Infinity N4 (current rules)" in english.stdout.splitlines()[0]
    for run in (english, spanish):
        text = run.stdout
        for raw in ("infinity-n4", "bs-attack", "speculative-attack", "white-noise", "(through)", ".txt", "t-sol"):
            assert raw not in text, raw
    root = ET.parse(spanish.svg).getroot()
    assert "Zona de Mala Visibilidad" in [t.text for t in root.iter(f"{SVG}text")]


def _demo(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``sightline demo ARGS`` run to its end in ``cwd``."""
    return subprocess.run(
        [_sightline(), "demo", *args], capture_output=True, text=True, encoding="utf-8", timeout=120, cwd=cwd
    )


def _one_line(done: subprocess.CompletedProcess[str], *phrases: str) -> None:
    """Exit 2, nothing on standard output, one line on standard error holding each phrase, no traceback."""
    assert done.returncode == 2, done
    assert done.stdout == "" and "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sightline demo: "), done.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_a_picture_path_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    """`--svg DIR` ends in one line naming DIR and the problem, exit 2, and prints no table."""
    _one_line(_demo("--svg", str(tmp_path)), f"cannot write the scene picture {tmp_path}: Is a directory")


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs sysfs, where no one may create files")
def test_a_folder_the_demo_cannot_write_in_is_one_line() -> None:
    """Run from a folder nobody may write in (sysfs refuses even root), the default picture's path is named."""
    _one_line(_demo(cwd=Path("/sys/kernel")), "cannot write the scene picture /sys/kernel/sightline-demo.svg: ")


def test_keep_log_on_a_file_is_one_line(tmp_path: Path) -> None:
    """`--keep-log FILE` (or a folder under a file) names the path, exit 2, before anything is played."""
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n", encoding="utf-8")
    _one_line(_demo("--keep-log", str(blocker)), f"cannot keep the log in {blocker}: Not a directory")
    _one_line(_demo("--keep-log", str(blocker / "log")), f"cannot keep the log in {blocker / 'log'}: Not a directory")
    assert blocker.read_text(encoding="utf-8") == "mine\n"


def test_keep_log_says_where_the_log_went_and_how_to_look(tmp_path: Path) -> None:
    """`--keep-log DIR` prints the database and a command; that command, run as printed, lists the demo's session."""
    folder = tmp_path / "my log"
    done = _demo("--svg", str(tmp_path / "demo.svg"), "--keep-log", str(folder))
    assert done.returncode == 0, done.stderr
    last = done.stdout.splitlines()[-1]
    assert last.startswith(f"Rulings logged in {folder / 'sightline.db'}; to look at them: sightline log sessions")
    command = shlex.split(last.split(": ", 1)[1])
    assert command[:4] == ["sightline", "log", "sessions", "--data-dir"] and Path(command[4]) == folder
    listed = subprocess.run([_sightline(), *command[1:]], capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()[1:]
    assert len(rows) == 1 and "Sightline demo (w-sightline-demo)" in rows[0] and rows[0].split()[-1] == "13"
