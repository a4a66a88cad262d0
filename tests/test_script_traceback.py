"""A script that fails under ``ascsim run`` reads like Python: its traceback starts at the
script's own frame (no ascsim command, runner or runpy frames) and names the user's line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MACHINERY = ("ascsim/cli.py", "ascsim/runner.py", "runpy")

FAILING = '''\
def check(values):
    total = sum(values)
    assert total == 7, f"total is {total}"


check([1, 2, 3])
'''

CHAINED = '''\
def load(name):
    try:
        return {"a": 1}[name]
    except KeyError as exc:
        raise ValueError(f"no setting {name!r}") from exc


load("b")
'''


def _ascsim(cwd: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascsim", "run", "--quiet", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


def _traceback(stderr: str) -> list[str]:
    lines = stderr.splitlines()
    return lines[lines.index("Traceback (most recent call last):"):]


def test_a_failing_assertion_shows_the_scripts_frames_only(tmp_path):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    done = _ascsim(tmp_path, str(script))
    assert done.returncode == 1
    tb = _traceback(done.stderr)
    assert tb[1] == f'  File "{script}", line 6, in <module>'
    assert tb[2].strip() == "check([1, 2, 3])"
    assert f'  File "{script}", line 3, in check' in tb
    assert 'assert total == 7, f"total is {total}"' in done.stderr
    assert tb[-1] == "AssertionError: total is 6"
    assert not any(m in done.stderr for m in MACHINERY), done.stderr


def test_chained_exceptions_start_at_the_script_too(tmp_path):
    (tmp_path / "chained.py").write_text(CHAINED)
    done = _ascsim(tmp_path, "chained.py")
    assert done.returncode == 1
    assert "The above exception was the direct cause of the following exception:" in done.stderr
    parts = done.stderr.split("Traceback (most recent call last):")[1:]
    assert [p.splitlines()[1] for p in parts] == ['  File "chained.py", line 3, in load',
                                                  '  File "chained.py", line 8, in <module>']
    assert done.stderr.rstrip().endswith("ValueError: no setting 'b'")
    assert not any(m in done.stderr for m in MACHINERY), done.stderr


def test_a_module_run_with_dash_m_starts_at_the_module(tmp_path):
    (tmp_path / "failing_mod.py").write_text(FAILING)
    done = _ascsim(tmp_path, "-m", "failing_mod")
    assert done.returncode == 1
    tb = _traceback(done.stderr)
    assert tb[1].startswith('  File "') and 'failing_mod.py", line 6, in <module>' in tb[1]
    assert not any(m in done.stderr for m in MACHINERY), done.stderr


def test_the_console_script_finds_a_module_in_the_working_directory(tmp_path):
    """``ascsim run -m NAME`` looks NAME up from the working directory, as ``python -m`` does,
    also when started as the installed ``ascsim`` command (whose sys.path lacks it)."""
    command = Path(sys.executable).with_name("ascsim")
    if not command.exists():
        command = None
    (tmp_path / "failing_mod.py").write_text(FAILING)
    args = [str(command)] if command else [sys.executable, "-c",
                                           "import sys; from ascsim.cli import main; "
                                           "sys.path.remove(''); sys.exit(main())"]
    done = subprocess.run([*args, "run", "--quiet", "-m", "failing_mod"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert "no module named" not in done.stderr
    assert _traceback(done.stderr)[-1] == "AssertionError: total is 6"


def test_every_frame_on_request(tmp_path):
    (tmp_path / "failing.py").write_text(FAILING)
    done = _ascsim(tmp_path, "failing.py", env={"ASCSIM_FULL_TRACEBACK": "1"})
    assert "ascsim/runner.py" in done.stderr and 'File "failing.py", line 3' in done.stderr
