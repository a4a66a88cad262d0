"""How much of the public pyasc, PyPTO-Pro and Triton-for-Ascend code runs unmodified on the
simulator.

Runs every file of the upstream suites, one process per file with a timeout: scripts under
``ascsim run FILE`` (a script passes when it exits 0; its own checks are asserts), pytest files
under ``ascsim run -m pytest FILE`` (each test function, parametrised cases separately, counts as
passed / failed / errored / skipped, read from pytest's JUnit XML report). Prints a table per
file and per folder, and the first error line of every file that does not fully pass.

The suites are kept outside the repository (see docs/upstream.md for the commits and how to
fetch them)::

    .venv/bin/python benchmarks/upstream_suites.py --pyasc /work/upstream/pyasc \\
        --pypto /work/upstream/pypto --timeout 300 --jobs 2 --json out/upstream.json

``--pyasc DIR``: a folder holding hicann/pyasc's ``python/`` (tutorials, test/kernels,
test/generalization, test/unit) and compiler-team-ru/pyasc's ``examples/``. ``--pypto DIR``: a
checkout of hicann/pypto, or its ``python/tests/st/pypto_pro/frontend`` folder itself.
``--triton DIR``: a checkout of triton-lang/triton-ascend (its ``third_party/ascend``
tutorials and unit tests: ``pytest_ut``, ``generalization_cases``, ``kernels``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: pyasc's folders: (name in the tables, path under --pyasc, kind, with subfolders).
#: ``script`` folders hold programs run as ``__main__``; ``pytest`` folders hold test files
#: (``test_*.py``). ``test`` is python/test's own files (test_import.py), without subfolders.
PYASC_FOLDERS = (
    ("tutorials", "python/tutorials", "script", True),
    ("examples", "examples", "script", True),
    ("test", "python/test", "pytest", False),
    ("test/kernels", "python/test/kernels", "pytest", True),
    ("test/generalization", "python/test/generalization", "pytest", True),
    ("test/unit", "python/test/unit", "pytest", True),
)
PYPTO_FRONTEND = "python/tests/st/pypto_pro/frontend"
#: triton-ascend's folders, as PYASC_FOLDERS. The unit tests' helper modules (test_common.py)
#: match test_*.py but hold no tests.
TRITON_FOLDERS = (
    ("triton/tutorials", "third_party/ascend/tutorials", "script", False),
    ("triton/pytest_ut", "third_party/ascend/unittest/pytest_ut", "pytest", True),
    ("triton/generalization_cases", "third_party/ascend/unittest/generalization_cases",
     "pytest", True),
    ("triton/kernels", "third_party/ascend/unittest/kernels", "pytest", True),
)
HELPER_FILES = ("conftest.py", "test_common.py")
OUTCOMES = ("passed", "failed", "errored", "skipped")
#: What pytest is given besides the file: quiet, no cache directory in the suite's folders.
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider")
ERROR_LINE = re.compile(r"^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|"
                        r"Warning)\b.*)$")


#: PyPTO-Pro files outside the tile API (register-level vector functions, SIMT, MX and HF8
#: matmul, fixpipe quantisation, the automatic pipeline): counted apart from the tile-API files.
PYPTO_BEYOND_TILES = (re.compile(r"(^|/)(vf_api|simt|lightning_indexer)/"),
                      re.compile(r"(^|/)fa/[^/]*_vf[^/]*\.py$"),
                      re.compile(r"(^|/)matmul/test_matmul_(hf8_fp32|mx)\.py$"),
                      re.compile(r"(^|/)datacopy/test_scale_[^/]*\.py$"),
                      re.compile(r"(^|/)fa/test_fa_serial_dn_auto\.py$"))
TILE_SCOPE, BEYOND_SCOPE = "tile API", "beyond the tile API"


def pypto_scope(relative: str) -> str:
    """Which part of PyPTO Pro a front-end test file (path relative to frontend/) tests."""
    return BEYOND_SCOPE if any(p.search(relative) for p in PYPTO_BEYOND_TILES) else TILE_SCOPE


@dataclass(frozen=True)
class SuiteFile:
    """One file to run: where it is, which folder it counts for, and how to run it."""

    folder: str
    path: Path
    kind: str  # "script" | "pytest"
    root: Path  # the folder the process starts in (pytest's rootdir, the conftest.py files)
    scope: str = ""  # PyPTO Pro: tile API or beyond (see pypto_scope)


@dataclass
class FileResult:
    """The outcome of one file: test counts (a script is one test) and the first error."""

    folder: str
    file: str
    scope: str = ""
    passed: int = 0
    failed: int = 0
    errored: int = 0
    skipped: int = 0
    seconds: float = 0.0
    first_error: str = ""
    #: The error line of every failed or errored test (``test name: line``), for --reasons.
    errors: list = field(default_factory=list)

    @property
    def tests(self) -> int:
        return self.passed + self.failed + self.errored + self.skipped

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.errored == 0 and self.passed > 0


def _first_existing(base: Path, relative: str) -> Path | None:
    """``base/relative``, or ``base/<relative without python/>`` (DIR may be python/ itself)."""
    for candidate in (base / relative, base / relative.removeprefix("python/")):
        if candidate.is_dir():
            return candidate
    return None


def pyasc_files(base: Path) -> list[SuiteFile]:
    """Every script and test file of the pyasc folders found under ``base``."""
    files: list[SuiteFile] = []
    for name, relative, kind, recursive in PYASC_FOLDERS:
        folder = _first_existing(base, relative)
        if folder is None:
            continue
        pattern = "test_*.py" if kind == "pytest" else "*.py"
        for path in sorted(folder.rglob(pattern) if recursive else folder.glob(pattern)):
            if path.name == "conftest.py":
                continue
            root = folder if kind == "pytest" else path.parent
            files.append(SuiteFile(name, path, kind, root))
    return files


def triton_files(base: Path) -> list[SuiteFile]:
    """Every tutorial script and unit-test file of triton-ascend under ``base``."""
    files: list[SuiteFile] = []
    for name, relative, kind, recursive in TRITON_FOLDERS:
        folder = base / relative
        if not folder.is_dir():
            continue
        pattern = "test_*.py" if kind == "pytest" else "*.py"
        for path in sorted(folder.rglob(pattern) if recursive else folder.glob(pattern)):
            if path.name in HELPER_FILES:
                continue
            root = folder if kind == "pytest" else path.parent
            files.append(SuiteFile(name, path, kind, root))
    return files


def pypto_files(base: Path) -> list[SuiteFile]:
    """Every test file of PyPTO Pro's front-end system tests, by first-level folder."""
    frontend = base / PYPTO_FRONTEND if (base / PYPTO_FRONTEND).is_dir() else base
    files = []
    for path in sorted(frontend.rglob("test_*.py")):
        parts = path.relative_to(frontend).parts
        folder = "frontend/" + (parts[0] if len(parts) > 1 else ".")
        scope = pypto_scope(path.relative_to(frontend).as_posix())
        if has_test_functions(path):
            files.append(SuiteFile(folder, path, "pytest", frontend, scope))
        else:  # a program named like a test file (fa/test_fa_graph_mode.py): run as one
            files.append(SuiteFile(folder, path, "script", path.parent, scope))
    return files


def has_test_functions(path: Path) -> bool:
    """Whether pytest would find tests in ``path``: a top-level ``test*`` function or a
    ``Test*`` class. A file without them is a program its authors run with ``python FILE``
    (its docstring's usage line says so), so the suite runs it as a script."""
    tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    return any((isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name.startswith("test"))
               or (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))
               for node in tree.body)


def command(item: SuiteFile, ascsim: list[str], soc: str | None, report: Path) -> list[str]:
    """The command line that runs ``item`` (ascsim's own options before the file or -m)."""
    own = ["--quiet"] + (["--soc", soc] if soc else [])
    if item.kind == "script":
        return [*ascsim, "run", *own, str(item.path)]
    return [*ascsim, "run", *own, "-m", "pytest", str(item.path), *PYTEST_ARGS,
            f"--junitxml={report}", f"--rootdir={item.root}"]


def junit_outcomes(xml_text: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Outcome counts of a pytest JUnit XML report, and (test, error line) of each test that
    failed or errored, in report order."""
    counts = dict.fromkeys(OUTCOMES, 0)
    errors = []
    root = ET.fromstring(xml_text)
    for case in root.iter("testcase"):
        outcome = "passed"
        for child in case:
            tag = {"failure": "failed", "error": "errored", "skipped": "skipped"}.get(child.tag)
            if tag is None:
                continue
            outcome = tag
            if tag in ("failed", "errored"):
                errors.append((case.get("name", "?"),
                               error_line(child.get("message") or "", child.text or "")))
            break
        counts[outcome] += 1
    return counts, errors


def junit_counts(xml_text: str) -> tuple[dict[str, int], str]:
    """Outcome counts of a pytest JUnit XML report, and the first failure's error line."""
    counts, errors = junit_outcomes(xml_text)
    return counts, errors[0][1] if errors else ""


def error_line(message: str, text: str) -> str:
    """One line saying what went wrong: the last exception line of a traceback, else the
    message's first line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    exceptions = [m.group(1) for ln in lines if (m := ERROR_LINE.match(ln))]
    if exceptions:
        return exceptions[-1][:300]
    first = message.strip().splitlines()[0] if message.strip() else (lines[-1] if lines else "")
    return first[:300]


def script_error(stderr: str, stdout: str) -> str:
    """The first error line of a script that failed: its last exception line."""
    return error_line("", stderr) or error_line("", stdout) or "exited non-zero, no output"


def run_file(item: SuiteFile, ascsim: list[str], soc: str | None, timeout: float) -> FileResult:
    """Run one file in its own process group; kill the group at the timeout."""
    result = FileResult(item.folder, str(item.path), item.scope)
    with tempfile.TemporaryDirectory(prefix="ascsim-upstream-") as tmp:
        report = Path(tmp) / "junit.xml"
        start = time.perf_counter()
        proc = subprocess.Popen(command(item, ascsim, soc, report), cwd=item.root,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True,
                                env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            timed_out = True
        result.seconds = time.perf_counter() - start
        if item.kind == "pytest" and report.is_file():
            counts, errors = junit_outcomes(report.read_text())
            for name in OUTCOMES:
                setattr(result, name, counts[name])
            result.first_error = errors[0][1] if errors else ""
            result.errors = [f"{test}: {line}" for test, line in errors]
        if timed_out:
            result.errored += 1
            result.first_error = result.first_error or f"timed out after {timeout:.0f} s"
        elif item.kind == "script":
            if proc.returncode == 0:
                result.passed = 1
            else:
                result.failed = 1
                result.first_error = script_error(stderr, stdout)
        elif result.tests == 0:  # pytest did not write its report: it could not start
            result.errored = 1
            result.first_error = script_error(stderr, stdout)
        elif proc.returncode not in (0, 1) and not result.first_error:
            result.first_error = script_error(stderr, stdout)
    if result.first_error and not result.errors:
        result.errors = [f"{item.path.name}: {result.first_error}"]
    return result


def run_all(files: list[SuiteFile], ascsim: list[str], soc: str | None, timeout: float,
            jobs: int, progress=None) -> list[FileResult]:
    def one(item):
        result = run_file(item, ascsim, soc, timeout)
        if progress:
            progress(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(one, files))


def folder_totals(results: list[FileResult]) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = {}
    for r in results:
        row = totals.setdefault(r.folder, {"files": 0, "files_ok": 0, **dict.fromkeys(OUTCOMES, 0)})
        row["files"] += 1
        row["files_ok"] += int(r.ok)
        for name in OUTCOMES:
            row[name] += getattr(r, name)
    return totals


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:5.1f} %" if whole else "    -  "


def format_tables(results: list[FileResult], base: dict[str, Path]) -> str:
    """Per-file table, per-folder table, and the first error of each file not fully passing."""
    out = []

    def short(r: FileResult) -> str:
        for root in base.values():
            try:
                return str(Path(r.file).relative_to(root))
            except ValueError:
                continue
        return r.file

    width = max([len(short(r)) for r in results] + [4])
    head = f"{'file':<{width}}  {'pass':>4} {'fail':>4} {'err':>4} {'skip':>4} {'sec':>6}"
    out += ["per file", head, "-" * len(head)]
    for r in results:
        out.append(f"{short(r):<{width}}  {r.passed:>4} {r.failed:>4} {r.errored:>4} "
                   f"{r.skipped:>4} {r.seconds:>6.1f}")
    totals = folder_totals(results)
    head = (f"{'folder':<28} {'files':>5} {'ok':>4} {'pass':>5} {'fail':>5} {'err':>5} "
            f"{'skip':>5}  {'tests passed':>12}")
    out += ["", "per folder", head, "-" * len(head)]
    grand = dict.fromkeys(("files", "files_ok", *OUTCOMES), 0)
    for folder, row in totals.items():
        tests = sum(row[name] for name in OUTCOMES)
        out.append(f"{folder:<28} {row['files']:>5} {row['files_ok']:>4} {row['passed']:>5} "
                   f"{row['failed']:>5} {row['errored']:>5} {row['skipped']:>5}  "
                   f"{_pct(row['passed'], tests):>12}")
        for name in grand:
            grand[name] += row[name]
    tests = sum(grand[name] for name in OUTCOMES)
    out.append(f"{'total':<28} {grand['files']:>5} {grand['files_ok']:>4} {grand['passed']:>5} "
               f"{grand['failed']:>5} {grand['errored']:>5} {grand['skipped']:>5}  "
               f"{_pct(grand['passed'], tests):>12}")
    scopes: dict[str, dict[str, int]] = {}
    for r in results:
        if r.scope:
            row = scopes.setdefault(r.scope, dict.fromkeys(("files", "files_ok", *OUTCOMES), 0))
            row["files"] += 1
            row["files_ok"] += int(r.ok)
            for name in OUTCOMES:
                row[name] += getattr(r, name)
    for scope, row in scopes.items():
        tests = sum(row[name] for name in OUTCOMES)
        out.append(f"{'PyPTO Pro, ' + scope:<28} {row['files']:>5} {row['files_ok']:>4} "
                   f"{row['passed']:>5} {row['failed']:>5} {row['errored']:>5} "
                   f"{row['skipped']:>5}  {_pct(row['passed'], tests):>12}")
    failing = [r for r in results if not r.ok]
    if failing:
        out += ["", "first error of each file not fully passing"]
        out += [f"{short(r)}: {r.first_error or '(no error line)'}" for r in failing]
    return "\n".join(out)


def reason_table(results: list[FileResult], top: int) -> str:
    """The most frequent error lines over every failed or errored test."""
    counter = Counter(line.partition(": ")[2] for r in results for line in r.errors)
    rows = [f"{n:>5}  {line}" for line, n in counter.most_common(top)]
    return "\n".join(["", f"most frequent errors (of {sum(counter.values())} failed or errored "
                       "tests)", *rows])


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pyasc", type=Path, metavar="DIR", help="pyasc's python/ and examples/")
    p.add_argument("--pypto", type=Path, metavar="DIR", help="hicann/pypto, or its frontend/")
    p.add_argument("--triton", type=Path, metavar="DIR", help="triton-lang/triton-ascend")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per file (300)")
    p.add_argument("--soc", help="simulated SoC for files that name none (ascsim run --soc)")
    p.add_argument("--jobs", type=int, default=1, help="files run at the same time (1)")
    p.add_argument("--only", metavar="TEXT", help="run only files whose path contains TEXT")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write the results as JSON")
    p.add_argument("--reasons", type=int, default=0, metavar="N",
                   help="also print the N most frequent error lines over all failing tests")
    p.add_argument("--ascsim", default=f"{sys.executable} -m ascsim", metavar="CMD",
                   help="the command that runs ascsim (default: this Python's -m ascsim)")
    return p


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    if ns.pyasc is None and ns.pypto is None and ns.triton is None:
        build_parser().error("give --pyasc DIR, --pypto DIR and/or --triton DIR")
    files: list[SuiteFile] = []
    base: dict[str, Path] = {}
    for name, root, finder in (("pyasc", ns.pyasc, pyasc_files),
                               ("pypto", ns.pypto, pypto_files),
                               ("triton", ns.triton, triton_files)):
        if root is None:
            continue
        if not root.is_dir():
            raise SystemExit(f"--{name} {root}: no such folder")
        found = finder(root.resolve())
        if not found:
            raise SystemExit(f"--{name} {root}: no suite files found there")
        files += found
        base[name] = root.resolve()
    if ns.only:
        files = [f for f in files if ns.only in str(f.path)]
    print(f"{len(files)} files, timeout {ns.timeout:.0f} s, {ns.jobs} at a time", flush=True)
    results = run_all(files, ns.ascsim.split(), ns.soc, ns.timeout, ns.jobs,
                      progress=lambda r: print(f"  {r.folder}: {Path(r.file).name} "
                                               f"{r.passed}/{r.tests}"
                                               + ("" if r.ok else f"  {r.first_error}"),
                                               flush=True))
    print()
    print(format_tables(results, base))
    if ns.reasons:
        print(reason_table(results, ns.reasons))
    if ns.json:
        ns.json.parent.mkdir(parents=True, exist_ok=True)
        ns.json.write_text(json.dumps({"results": [asdict(r) for r in results],
                                       "folders": folder_totals(results)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
