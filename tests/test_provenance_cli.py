"""Wrong-output provenance and race impact under the command line: a failed check of a script
is followed by the report of who wrote the differing elements; ``ascsim check`` judges each
race by re-running the script in the other order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from source_marks import SourceMarks

SCRIPTS = Path(__file__).parent / "provenance_scripts"


def _ascsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascsim", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "COLUMNS": "200"})


def _line(script: str, name: str) -> str:
    path = SCRIPTS / script
    return f"{path}:{SourceMarks(str(path)).mark(name)}"


def test_assert_close_failure_is_followed_by_the_tail_tile_report():
    done = _ascsim("run", "--quiet", str(SCRIPTS / "tail_offset.py"))
    assert done.returncode == 1
    err = done.stderr
    assert "AssertionError: Tensor-likes are not close!" in err
    assert "assert_hooks" not in err  # the wrapper's frame is not the user's
    report = err[err.index("ascsim: 128 of 1088 elements differ"):]
    assert "pattern: tail tile" in report and _line("tail_offset.py", "tail-store") in report
    assert "never written: 64 elements" in report


def test_numpy_testing_failure_names_the_uninitialised_tile():
    done = _ascsim("run", "--quiet", str(SCRIPTS / "half_computed.py"))
    assert done.returncode == 1
    assert "pattern: uninitialised" in done.stderr
    assert _line("half_computed.py", "copy-out") in done.stderr


def test_no_provenance_leaves_the_failure_alone():
    done = _ascsim("run", "--quiet", "--no-provenance", str(SCRIPTS / "tail_offset.py"))
    assert done.returncode == 1 and "AssertionError" in done.stderr
    assert "elements differ" not in done.stderr


def test_check_explains_the_assert_and_judges_the_race(tmp_path):
    out = tmp_path / "report.json"
    done = _ascsim("check", "--no-cores", "--json", str(out), str(SCRIPTS / "missing_sync.py"))
    assert done.returncode == 1
    assert "pattern: race" in done.stderr  # after `assert torch.allclose(y, x)` failed
    text = " ".join(done.stdout.split())
    assert "harmful races (the other order changes the result):" in text
    assert "changes 256 elements of 'y'; its own check fails -> passes" in text
    (impact,) = json.loads(out.read_text())["race_impact"]
    assert impact["harmful"] and impact["hazard"] == "WAR" and impact["changed"] == {"y": 256}
    assert impact["lines"][0][1] == int(_line("missing_sync.py", "consume").rsplit(":", 1)[1])


def test_no_race_impact_skips_the_re_runs():
    done = _ascsim("check", "--no-cores", "--no-race-impact", str(SCRIPTS / "missing_sync.py"))
    assert done.returncode == 1
    assert "cross-core-race" in done.stdout and "harmful races" not in done.stdout


def test_pytest_failure_on_allclose_gets_the_report_section(tmp_path):
    test = tmp_path / "test_blocks.py"
    test.write_text((SCRIPTS / "pytest_blocks.py").read_text())
    done = subprocess.run([sys.executable, "-m", "ascsim", "run", "--quiet", "-m", "pytest",
                           "-q", "-p", "no:cacheprovider", str(test)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1
    assert "ascsim: why the output is wrong" in done.stdout
    section = done.stdout[done.stdout.index("ascsim: why the output is wrong"):]
    assert "pattern: one core" in section and "core 2 (block 2)" in section
    assert f"{test}:{SourceMarks(str(test)).mark('block-out')}" in section
