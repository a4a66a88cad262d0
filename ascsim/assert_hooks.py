"""A user's own result checks, explained when they fail on a tensor a simulated launch wrote.

Under ``ascsim run`` / ``check`` (:func:`install`, called before the script runs):

* ``torch.testing.assert_close`` and the ``numpy.testing`` asserts (``assert_allclose``,
  ``assert_array_equal``, ``assert_array_almost_equal``, ``assert_almost_equal``) that fail
  get the wrong-output report (:mod:`ascsim.wrong_output`) as a note on their
  ``AssertionError``: Python prints it after the message, pytest in its report;
* ``torch.allclose`` / ``Tensor.allclose`` / ``numpy.allclose`` returning False remember their
  arguments: when an ``AssertionError`` (``assert torch.allclose(out, ref)``) then ends the
  script, the command prints the report after its traceback (:func:`pending_report`); under
  ``ascsim run -m pytest`` the plugin (:mod:`ascsim.pytest_plugin`) adds it to the failed
  test's report.

The comparison itself is the original function's; the wrappers only look at its outcome, and a
report is made only for a tensor with a writer record (:func:`ascsim.sim.provenance.lookup`).
Nothing here may hide the user's error: a report that fails to build is left out.
"""

from __future__ import annotations

import functools

from ascsim.sim import provenance

#: The latest failed allclose-style call: (actual, expected, rtol, atol, equal_nan), or None.
_pending: list = [None]
_installed: list[bool] = [False]


def report_for(actual, expected, rtol=None, atol=None, equal_nan=False) -> str | None:
    """The wrong-output report of ``actual`` against ``expected`` (either order: the one with
    a writer record is the output), or None when neither was written by a launch or the
    report cannot be made."""
    from ascsim.wrong_output import explain

    try:
        if provenance.lookup(actual) is None:
            if provenance.lookup(expected) is None:
                return None
            actual, expected = expected, actual
        found = explain(actual, expected, rtol=rtol, atol=atol, equal_nan=bool(equal_nan))
    except Exception:  # noqa: BLE001 - the user's own failure must show, whatever happens here
        return None
    if not found.differing or found.writers is None:
        return None
    return str(found)


def _noting(original, tolerances):
    """``original`` (an assert) that adds the report to the AssertionError it raises;
    ``tolerances(args, kwargs)`` -> (actual, expected, rtol, atol, equal_nan)."""
    @functools.wraps(original)
    def checked(*args, **kwargs):
        try:
            return original(*args, **kwargs)
        except AssertionError as exc:
            try:
                text = report_for(*tolerances(args, kwargs))
            except Exception:  # noqa: BLE001 - as in report_for
                text = None
            if text:
                exc.add_note(text)
            raise
    checked.__ascsim_wrapped__ = original
    return checked


def _remembering(original, tolerances):
    """``original`` (an allclose) that remembers its arguments when it returns False."""
    @functools.wraps(original)
    def compared(*args, **kwargs):
        result = original(*args, **kwargs)
        if not result:
            try:
                _pending[0] = tolerances(args, kwargs)
            except Exception:  # noqa: BLE001 - odd arguments: nothing to explain later
                _pending[0] = None
        return result
    compared.__ascsim_wrapped__ = original
    return compared


def _arg(args, kwargs, index: int, name: str, default=None):
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _torch_close(args, kwargs):
    return (_arg(args, kwargs, 0, "actual"), _arg(args, kwargs, 1, "expected"),
            kwargs.get("rtol"), kwargs.get("atol"), kwargs.get("equal_nan", False))


def _torch_allclose(args, kwargs):
    return (_arg(args, kwargs, 0, "input"), _arg(args, kwargs, 1, "other"),
            _arg(args, kwargs, 2, "rtol", 1e-5), _arg(args, kwargs, 3, "atol", 1e-8),
            _arg(args, kwargs, 4, "equal_nan", False))


def _numpy_allclose(args, kwargs):
    return (_arg(args, kwargs, 0, "a"), _arg(args, kwargs, 1, "b"),
            _arg(args, kwargs, 2, "rtol", 1e-5), _arg(args, kwargs, 3, "atol", 1e-8),
            _arg(args, kwargs, 4, "equal_nan", False))


def _numpy_assert_allclose(args, kwargs):
    return (_arg(args, kwargs, 0, "actual"), _arg(args, kwargs, 1, "desired"),
            _arg(args, kwargs, 2, "rtol", 1e-7), _arg(args, kwargs, 3, "atol", 0.0),
            _arg(args, kwargs, 4, "equal_nan", True))


def _numpy_equal(args, kwargs):
    return (_arg(args, kwargs, 0, "x"), _arg(args, kwargs, 1, "y"), 0.0, 0.0, True)


def _numpy_almost(names):
    def tolerances(args, kwargs):
        decimal = _arg(args, kwargs, 2, "decimal", 6 if names[0] == "x" else 7)
        return (_arg(args, kwargs, 0, names[0]), _arg(args, kwargs, 1, names[1]), 0.0,
                1.5 * 10.0 ** (-decimal), True)
    return tolerances


def _patch(owner, name: str, wrap, tolerances) -> None:
    original = getattr(owner, name, None)
    if original is None or hasattr(original, "__ascsim_wrapped__"):
        return
    setattr(owner, name, wrap(original, tolerances))


def install() -> None:
    """Wrap the comparison functions (once per process)."""
    if _installed[0]:
        return
    _installed[0] = True
    import numpy
    import numpy.testing
    import torch
    import torch.testing

    _patch(torch.testing, "assert_close", _noting, _torch_close)
    _patch(torch, "allclose", _remembering, _torch_allclose)
    _patch(torch.Tensor, "allclose", _remembering, _torch_allclose)
    _patch(numpy, "allclose", _remembering, _numpy_allclose)
    _patch(numpy.testing, "assert_allclose", _noting, _numpy_assert_allclose)
    _patch(numpy.testing, "assert_array_equal", _noting, _numpy_equal)
    _patch(numpy.testing, "assert_array_almost_equal", _noting, _numpy_almost(("x", "y")))
    _patch(numpy.testing, "assert_almost_equal", _noting,
           _numpy_almost(("actual", "desired")))


def clear_pending() -> None:
    """Forget the latest failed allclose (a test that did not assert on it has ended)."""
    _pending[0] = None


def pending_report(exc: BaseException) -> str | None:
    """The report of the latest failed allclose, for an ``AssertionError`` that ended a script
    (None for another exception, one that already carries a report, or no failed allclose)."""
    if not isinstance(exc, AssertionError) or getattr(exc, "__notes__", None):
        return None
    pending, _pending[0] = _pending[0], None
    if pending is None:
        return None
    return report_for(*pending)
