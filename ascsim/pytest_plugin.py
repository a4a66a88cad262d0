"""A pytest plugin that holds the kernels a test launches to a budget file (ascsim/budget.py).

Load it with ``-p ascsim.pytest_plugin`` or ``pytest_plugins = ["ascsim.pytest_plugin"]`` in a
conftest (installing ascsim also registers it through the ``pytest11`` entry point). Then
either mark a test::

    @pytest.mark.ascsim_budget("budgets.yaml")
    def test_add():
        vector_add(x, y)            # every launch made in the test is checked

or use the fixture for a part of one::

    def test_add(ascsim_budget):
        with ascsim_budget("budgets.yaml"):
            vector_add(x, y)

A launch slower than its entry fails the test with the budget table; a faster one passes and
is reported as a warning, so that the budget can be tightened. ``--ascsim-budget-write`` writes
the measured times into the files instead of checking them (new entries, or updated ones).
Relative paths are taken from the test file's folder.

Under ``ascsim run -m pytest`` a test failing on ``assert torch.allclose(out, ref)`` (or
``numpy.allclose``) for an output a kernel wrote also gets the wrong-output report as a
section of its failure report (:mod:`ascsim.assert_hooks`); ``assert_close`` and the
``numpy.testing`` asserts carry it in their message already.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import warnings

import pytest
from rich.console import Console

from ascsim import budget


def pytest_addoption(parser) -> None:
    parser.addoption("--ascsim-budget-write", action="store_true", default=False,
                     help="ascsim: write the launches' device times into the budget files of "
                     "the ascsim_budget markers and fixtures instead of checking them")


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "ascsim_budget(path): hold every ascsim launch of the test to the device "
        "times of the budget file at path")


class BudgetWarning(UserWarning):
    """A launch was faster than its budget by more than the tolerance: tighten the budget."""


def _table_text(verdict: budget.Verdict) -> str:
    out = io.StringIO()
    console = Console(file=out, width=140, color_system=None)
    console.print(budget.verdict_table(verdict))
    console.print(verdict.summary())
    return out.getvalue()


def _resolve(path: str, node) -> str:
    if os.path.isabs(path):
        return path
    return os.path.join(os.path.dirname(str(node.path)), path)


@contextlib.contextmanager
def _held(path: str, write: bool):
    """Collect the launches of the block, then check them against ``path`` (or write them)."""
    from ascsim.session import SESSION

    with SESSION.collect() as run:
        yield run
    reports = run.reports
    if write:
        budget.write_budget(path, reports)
        return
    if not os.path.exists(path):
        pytest.fail(f"ascsim budget file {path} does not exist (make it with "
                    "--ascsim-budget-write)", pytrace=False)
    book = budget.load_budget(path)
    verdict = budget.check(book, reports)
    # Entries of the file that this test did not launch belong to other tests.
    verdict = budget.Verdict(tuple(r for r in verdict.rows if r.status != "not run"))
    if verdict.failed:
        pytest.fail("ascsim budget exceeded:\n" + _table_text(verdict), pytrace=False)
    if verdict.count("faster"):
        warnings.warn(BudgetWarning("ascsim launches faster than their budget:\n"
                                    + _table_text(verdict)), stacklevel=3)


@pytest.fixture
def ascsim_budget(request):
    """``with ascsim_budget(path): ...`` checks the launches of the block against ``path``."""
    write = request.config.getoption("--ascsim-budget-write")

    def hold(path: str):
        return _held(_resolve(path, request.node), write)
    return hold


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    marker = item.get_closest_marker("ascsim_budget")
    if marker is None:
        return (yield)
    if len(marker.args) != 1 or not isinstance(marker.args[0], (str, os.PathLike)):
        raise pytest.UsageError(f"{item.nodeid}: ascsim_budget takes one argument, the budget "
                                "file's path")
    path = _resolve(os.fspath(marker.args[0]), item)
    write = item.config.getoption("--ascsim-budget-write")
    # A test that fails on its own raises out of the yield: its launches are not checked.
    with _held(path, write):
        result = yield
    return result


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The wrong-output report of a failed ``assert torch.allclose(...)`` (only when ascsim's
    comparison hooks are installed: under ``ascsim run``)."""
    outcome = yield
    hooks = sys.modules.get("ascsim.assert_hooks")
    if hooks is None or call.when != "call":
        return
    if call.excinfo is not None:
        text = hooks.pending_report(call.excinfo.value)
        if text:
            outcome.get_result().sections.append(("ascsim: why the output is wrong", text))
    hooks.clear_pending()
