"""ascsim: Ascend AI Core kernels (pyasc, PyPTO Pro, Triton) run on a simulated chip."""


def explain(actual, expected, *, rtol=None, atol=None, equal_nan=False):
    """Why ``actual`` (a tensor a simulated launch wrote) differs from ``expected``: the
    differing elements grouped by their writer and the pattern they make
    (:func:`ascsim.wrong_output.explain`; needs ``ascsim run`` or ``SESSION.provenance``)."""
    from ascsim.wrong_output import explain as explain_output

    return explain_output(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
