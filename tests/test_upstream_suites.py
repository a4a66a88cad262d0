"""benchmarks/upstream_suites.py: file discovery, outcome parsing, and a run over a tiny fake
suite. The real suites are not in the repository: the last test runs pyasc's tutorials when
ASCSIM_UPSTREAM_PYASC names the folder holding them (see docs/upstream.md)."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
UPSTREAM_PYASC = os.environ.get("ASCSIM_UPSTREAM_PYASC")


def _load():
    spec = importlib.util.spec_from_file_location("ascsim_benchmarks_upstream_suites",
                                                  BENCHMARKS / "upstream_suites.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


suites = _load()

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="t" name="test_ok" time="0.1"/>
<testcase classname="t" name="test_case[1]" time="0.1"/>
<testcase classname="t" name="test_bad" time="0.1"><failure message="AssertionError: wrong sum
assert False">def test_bad():
&gt;   assert False, "wrong sum"
E   AssertionError: wrong sum
E   assert False</failure></testcase>
<testcase classname="t" name="test_setup" time="0.1"><error message="failed on setup with
&quot;NameError: x&quot;">E   NameError: name 'x' is not defined</error></testcase>
<testcase classname="t" name="test_skip" time="0.0"><skipped message="no NPU"/></testcase>
</testsuite></testsuites>"""

OK_SCRIPT = '''
import torch
import torch_npu
import asc
import asc.runtime.config as config

config.set_platform(config.Backend.NPU)
x = torch.ones(4, device="npu")
torch.npu.synchronize()
assert asc.__name__ == "asc" and x.sum() == 4
'''
BAD_SCRIPT = '''
import asc
raise ValueError("broken on purpose")
'''
TESTS = '''
import pytest
import asc

def test_pass():
    assert asc.GlobalTensor is not None

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n == 1, "only one"

@pytest.mark.skip(reason="not here")
def test_skipped():
    pass
'''
BROKEN_IMPORT = '''
from asc.nowhere import Something

def test_never():
    pass
'''
SLOW = '''
import time

def test_sleeps():
    time.sleep(120)
'''


def _write(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_junit_counts_each_outcome_and_the_first_error():
    counts, first = suites.junit_counts(JUNIT)
    assert counts == {"passed": 2, "failed": 1, "errored": 1, "skipped": 1}
    assert first == "AssertionError: wrong sum"


def test_junit_outcomes_list_every_failing_test():
    _, errors = suites.junit_outcomes(JUNIT)
    assert errors == [("test_bad", "AssertionError: wrong sum"),
                      ("test_setup", "NameError: name 'x' is not defined")]


def test_error_line_prefers_the_last_exception_line():
    text = ("Traceback (most recent call last):\n  File \"x.py\", line 3\n"
            "ModuleNotFoundError: No module named 'pypto_pro'\n")
    assert suites.error_line("", text) == "ModuleNotFoundError: No module named 'pypto_pro'"
    assert suites.error_line("collection failure\nmore", "no exception here") == \
        "collection failure"
    assert suites.script_error("", "") == "exited non-zero, no output"


def test_discovery_of_pyasc_and_pypto_files(tmp_path):
    _write(tmp_path / "pyasc", {
        "python/tutorials/01_add/add.py": "", "examples/06_gelu/gelu.py": "",
        "python/test/kernels/conftest.py": "", "python/test/kernels/test_vadd.py": "",
        "python/test/kernels/helper.py": "", "python/test/unit/lib/test_x.py": "",
        "python/test/test_import.py": "",
    })
    found = suites.pyasc_files(tmp_path / "pyasc")
    assert [(f.folder, f.path.name, f.kind) for f in found] == [
        ("tutorials", "add.py", "script"), ("examples", "gelu.py", "script"),
        ("test", "test_import.py", "pytest"), ("test/kernels", "test_vadd.py", "pytest"),
        ("test/unit", "test_x.py", "pytest")]
    assert found[4].root == tmp_path / "pyasc/python/test/unit"
    # --pyasc may also name pyasc's python/ folder itself
    assert len(suites.pyasc_files(tmp_path / "pyasc" / "python")) == 4
    _write(tmp_path / "pypto" / suites.PYPTO_FRONTEND, {
        "conftest.py": "", "matmul/test_mm.py": "def test_mm():\n    pass\n",
        "simt/thread/test_t.py": "class TestT:\n    pass\n",
        "fa/test_graph.py": '"""Usage: python test_graph.py"""\ndef helper():\n    pass\n',
    })
    pto = suites.pypto_files(tmp_path / "pypto")
    assert [(f.folder, f.path.name, f.kind) for f in pto] == [
        ("frontend/fa", "test_graph.py", "script"), ("frontend/matmul", "test_mm.py", "pytest"),
        ("frontend/simt", "test_t.py", "pytest")]
    # a file without test functions is a program: it runs in its own folder
    assert pto[0].root == tmp_path / "pypto" / suites.PYPTO_FRONTEND / "fa"


@pytest.mark.parametrize("path,scope", [
    ("element_wise/test_add.py", "tile API"),
    ("fa/test_fa_perf_tkv_preload_nbuf.py", "tile API"),
    ("vf_api/test_softmax_tile_group_vf.py", "beyond the tile API"),
    ("simt/launch/test_x.py", "beyond the tile API"),
    ("fa/test_fa_serial_dn_vf.py", "beyond the tile API"),
    ("fa/test_fa_serial_dn_auto.py", "beyond the tile API"),
    ("matmul/test_matmul_mx.py", "beyond the tile API"),
    ("matmul/test_matmul_hf8_fp32.py", "beyond the tile API"),
    ("datacopy/test_scale_quant.py", "beyond the tile API"),
    ("datacopy/test_single_mode_tail.py", "tile API"),
    ("lightning_indexer/test_li.py", "beyond the tile API"),
])
def test_pypto_files_are_split_into_tile_api_and_beyond(path, scope):
    assert suites.pypto_scope(path) == scope


def test_run_over_a_fake_suite(tmp_path, capsys):
    _write(tmp_path, {
        "python/tutorials/01_ok/ok.py": OK_SCRIPT,
        "python/tutorials/02_bad/bad.py": BAD_SCRIPT,
        "python/test/kernels/test_mixed.py": TESTS,
        "python/test/unit/test_broken.py": BROKEN_IMPORT,
        "python/test/unit/test_slow.py": SLOW,
    })
    out_json = tmp_path / "out" / "r.json"
    # The timeout leaves the quick files room on a loaded host (each starts Python and torch);
    # only the sleeping one may reach it.
    assert suites.main(["--pyasc", str(tmp_path), "--timeout", "45", "--jobs", "2",
                        "--json", str(out_json), "--reasons", "3"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()
            if line.startswith(("python/", "tutorials ", "test/", "total "))}
    assert rows["python/tutorials/01_ok/ok.py"][:4] == ["1", "0", "0", "0"]
    assert rows["python/tutorials/02_bad/bad.py"][:4] == ["0", "1", "0", "0"]
    assert rows["python/test/kernels/test_mixed.py"][:4] == ["2", "1", "0", "1"]
    assert rows["python/test/unit/test_broken.py"][:4] == ["0", "0", "1", "0"]
    assert rows["python/test/unit/test_slow.py"][:4] == ["0", "0", "1", "0"]
    # folder rows: files, files fully passing, passed, failed, errored, skipped, % passed
    assert rows["tutorials"][:6] == ["2", "1", "1", "1", "0", "0"]
    assert rows["total"][:6] == ["5", "1", "3", "2", "2", "1"]
    assert "bad.py: ValueError: broken on purpose" in out
    assert "test_mixed.py: AssertionError: only one" in out
    assert "test_broken.py: ModuleNotFoundError: No module named 'asc.nowhere'" \
        in out
    assert "test_slow.py: timed out after 45 s" in out
    assert '"folders"' in out_json.read_text()
    assert "most frequent errors (of 4 failed or errored tests)" in out
    assert "    2  AssertionError: only one" not in out  # one failing case each
    assert "    1  AssertionError: only one" in out


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no suite files found"):
        suites.main(["--pyasc", str(tmp_path)])
    with pytest.raises(SystemExit, match="no such folder"):
        suites.main(["--pypto", str(tmp_path / "nowhere")])


@pytest.mark.skipif(not UPSTREAM_PYASC, reason="ASCSIM_UPSTREAM_PYASC is not set")
def test_pyasc_tutorials_pass_unmodified(capsys):
    assert suites.main(["--pyasc", UPSTREAM_PYASC, "--only", "tutorials", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    (row,) = [line.split() for line in out.splitlines() if line.startswith("tutorials ")]
    assert row[1] == row[2] == "5"  # five files, five fully passing
