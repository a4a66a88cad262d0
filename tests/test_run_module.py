"""``ascsim run -m MODULE args``: a module run as ``python -m`` runs it, with the front-ends."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from ascsim.cli import _split_module_args

TESTS = textwrap.dedent('''
    import asc
    import torch
    import torch_npu

    def test_front_ends_are_there():
        assert asc.__name__ == "asc" and torch.npu.is_available()

    def test_fails():
        assert torch.zeros(2, device="npu").sum() == 1, "zeros sum to 0"
''')


def _cli(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ascsim", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "120"})


def test_module_arguments_are_left_to_the_module():
    assert _split_module_args(["run", "--quiet", "-m", "pytest", "-q", "-v", "t.py"]) == (
        ["run", "--quiet", "-m", "pytest"], ["-q", "-v", "t.py"])
    # after a script, -m is the script's own argument
    argv = ["run", "s.py", "-m", "x", "-v", "Ascend910B1"]
    assert _split_module_args(argv) == (argv, [])
    assert _split_module_args(["info", "-m", "x"]) == (["info", "-m", "x"], [])


def test_pytest_under_run_reports_its_outcome_and_exit_code(tmp_path):
    (tmp_path / "test_front.py").write_text(TESTS)
    done = _cli("run", "--quiet", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "test_front.py", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout and "zeros sum to 0" in done.stdout
    done = _cli("run", "--quiet", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "test_front.py::test_front_ends_are_there", cwd=tmp_path)
    assert done.returncode == 0 and "1 passed" in done.stdout


def test_script_arguments_may_contain_dash_m(tmp_path):
    script = tmp_path / "echo.py"
    script.write_text("import sys\nprint('ARGS', sys.argv[1:])\n")
    done = _cli("run", "--quiet", str(script), "-m", "foo", cwd=tmp_path)
    assert done.returncode == 0 and "ARGS ['-m', 'foo']" in done.stdout


def test_unknown_module_is_a_clear_error(tmp_path):
    done = _cli("run", "--quiet", "-m", "no_such_module_here", cwd=tmp_path)
    assert done.returncode == 1
    assert "no module named 'no_such_module_here'" in done.stderr
