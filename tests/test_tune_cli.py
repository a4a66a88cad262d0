"""``ascsim tune``: progress, report files, resume, exit codes and errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ascsim.cli import main

TARGET = str(Path(__file__).parent / "fixtures" / "tune_target.py")


def _space(tmp_path: Path) -> str:
    path = tmp_path / "space.yaml"
    path.write_text("x: [1, 2, 3, 4]\ny: [a, b]\n")
    return str(path)


def test_tune_writes_the_report_and_resumes(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["tune", f"{TARGET}:entry", "--space", _space(tmp_path), "--budget", "5",
            "--workers", "1", "--seed", "4", "--report", str(out)]
    assert main(args) == 0
    first = json.loads((out / "tune.json").read_text())
    assert len(first["trials"]) == 5 and first["sampler"] == "tpe"
    assert first["backend"].startswith("process pool (")
    args[args.index("--budget") + 1] = "64"  # the whole grid now: resume the stored study
    assert main(args) == 0
    done = json.loads((out / "tune.json").read_text())
    assert [t["config"] for t in done["trials"][:5]] == [t["config"] for t in first["trials"]]
    assert done["best"]["config"] == {"x": 2, "y": "b"}
    assert done["best"]["value"] == 5.0
    assert sum(t["status"] == "infeasible" and not t["repeat"] for t in done["trials"]) == 2
    page = (out / "tune.html").read_text()
    for part in ("Best configuration", 'id="top"', 'id="plot-x"', 'id="plot-y"',
                 "x=4 does not fit", "tune_target.py:"):
        assert part in page
    text = capsys.readouterr().out
    assert "best device_time_us = 5.000 with x=2, y=b" in text
    assert (out / "study.db").exists()


def test_tune_forks_its_workers_before_the_progress_display_starts(tmp_path):
    """Run as a command (one thread at start), ``ascsim tune`` starts its workers before the
    progress display's refresh thread, so they are forks of it."""
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "ascsim", "tune", f"{TARGET}:entry", "--space",
                           _space(tmp_path), "--budget", "4", "--workers", "2", "--report",
                           str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((out / "tune.json").read_text())["backend"] == "process pool (forked)"


def test_tune_names_what_is_wrong(tmp_path, capsys):
    space = _space(tmp_path)
    assert main(["tune", f"{TARGET}:nothing", "--space", space]) == 2
    assert "has no function 'nothing'" in capsys.readouterr().out
    assert main(["tune", "missing.py:entry", "--space", space]) == 2
    assert "no such script" in capsys.readouterr().out
    assert main(["tune", f"{TARGET}:entry", "--space", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read the space file" in capsys.readouterr().out


@pytest.mark.parametrize("option, value, why", [
    ("--workers", "0", "must be >= 1, got 0"), ("--workers", "two", "wants an integer >= 1"),
    ("--top", "-3", "must be >= 1, got -3"),
])
def test_bad_option_values_exit_2_with_argparses_message(tmp_path, capsys, option, value, why):
    with pytest.raises(SystemExit) as stop:
        main(["tune", f"{TARGET}:entry", "--space", _space(tmp_path), option, value])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}: {why}" in err and err.startswith("usage: ")


def test_no_feasible_configuration_exits_1(tmp_path, capsys):
    space = tmp_path / "space.yaml"
    space.write_text("x: [4]\ny: [a]\n")
    assert main(["tune", f"{TARGET}:entry", "--space", str(space), "--workers", "1"]) == 1
    assert "no feasible configuration" in capsys.readouterr().out
