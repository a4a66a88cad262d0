"""Do two checkouts of ascsim report the same thing? `ascsim check --json` of every example, A vs B.

A speed change must not change any result: this runs ``ascsim check --json`` on every script of
``examples/`` (and on the upstream pyasc tutorials and examples when ``ASCSIM_UPSTREAM_PYASC``
names them, and on the kernel-check test files, whose kernels are buggy on purpose) once with
checkout A's package and once with checkout B's, and compares the JSON reports: findings,
simulated times, bytes and instruction counts. Prints one line per script and exits non-zero
when any differ. ``--findings-only`` compares the findings alone, for a change of the timing
model, which moves simulated times on purpose.

    .venv/bin/python benchmarks/findings_ab.py /path/to/checkout-a /path/to/checkout-b
    .venv/bin/python benchmarks/findings_ab.py --findings-only A B
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Test files whose kernels report findings on purpose: run under `ascsim check -m pytest`, every
# launch's report goes into the JSON.
CHECK_TEST_FILES = ("tests/test_checks.py", "tests/test_checks_reuse.py",
                    "tests/test_checks_strided.py", "tests/test_ops_findings.py")
UPSTREAM_FOLDERS = ("python/tutorials", "examples")
TIMEOUT_S = 900


def targets() -> list[tuple[str, list[str]]]:
    """(label, arguments after `ascsim check --json FILE`) of everything compared."""
    found = [(path.name, [str(path)]) for path in sorted((ROOT / "examples").glob("*.py"))
             if path.name != "example_cli.py"]
    upstream = os.environ.get("ASCSIM_UPSTREAM_PYASC")
    if upstream:
        for folder in UPSTREAM_FOLDERS:
            for path in sorted((Path(upstream) / folder).glob("*/*.py")):
                found.append((f"{path.parent.name}/{path.name}", [str(path)]))
    found.extend((name, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                         str(ROOT / name)]) for name in CHECK_TEST_FILES)
    return found


def check_json(checkout: Path, arguments: list[str], folder: Path) -> list[dict] | str:
    """The reports `ascsim check` of ``checkout`` writes for ``arguments``, or its error text.

    Both checkouts run in the same neutral working folder ``folder``: findings name kernel
    files relative to it, and ``python -m`` would import a package found there first."""
    out = folder / "reports.json"
    out.unlink(missing_ok=True)
    env = dict(os.environ, PYTHONPATH=str(checkout))
    command = [sys.executable, "-m", "ascsim", "check", "--quiet", "--json", str(out),
               *arguments]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                          cwd=str(folder))
    if not out.exists():
        return f"exit {done.returncode}: {done.stderr.strip()[-400:]}"
    return json.loads(out.read_text())["reports"]


def _findings(reports: list[dict]) -> list:
    """Each launch's kernel and findings, in launch order."""
    return [(r.get("kernel"), r["findings"]) for r in reports]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="checkout A (the folder holding ascsim/)")
    parser.add_argument("b", type=Path, help="checkout B")
    parser.add_argument("--findings-only", action="store_true",
                        help="compare the launches' findings only, not their times")
    args = parser.parse_args(argv)
    for checkout in (args.a, args.b):
        if not (checkout / "ascsim" / "__init__.py").is_file():
            parser.error(f"{checkout} holds no ascsim package")
    differing = 0
    folder = Path(tempfile.mkdtemp(prefix="findings_ab_"))
    for label, arguments in targets():
        a = check_json(args.a.resolve(), arguments, folder)
        b = check_json(args.b.resolve(), arguments, folder)
        if isinstance(a, str) or isinstance(b, str):
            verdict = f"ERROR  A: {a if isinstance(a, str) else 'ok'}  B: " \
                      f"{b if isinstance(b, str) else 'ok'}"
            differing += 1
        elif (_findings(a) != _findings(b)) if args.findings_only else (a != b):
            verdict = "DIFFERENT"
            differing += 1
        else:
            findings = sum(len(r["findings"]) for r in a)
            verdict = f"same ({len(a)} launches, {findings} findings)"
        print(f"{label:<40}{verdict}", flush=True)
    print(f"{differing} of {len(targets())} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
