"""The HTML report pages (Jinja2 templates, autoescaped): names reach the page as text."""

import dataclasses
from html.parser import HTMLParser

import pytest
import torch
from test_bench_runner import SOC, tiny_conv_task, torch_stand_in_conv

from ascsim.bench.report import to_html as bench_html
from ascsim.bench.runner import run_bench
from ascsim.tune.report import to_html as tune_html
from ascsim.tune.results import TrialRecord, TuneResult
from ascsim.tune.space import Space

HOSTILE = "<script>alert('x')</script> & co"


class _Page(HTMLParser):
    """Start tags and the page's text (entities decoded)."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def _assert_escaped(page: str, times: int) -> None:
    parsed = _Page(page)
    assert "script" not in parsed.tags
    assert "".join(parsed.text).count(HOSTILE) >= times  # shown, as text
    assert "<script>" not in page and "&lt;script&gt;" in page and "&amp; co" in page


@pytest.fixture(scope="module")
def hostile_result():
    task = tiny_conv_task().select([1, 5])
    task = dataclasses.replace(task, name=f"op {HOSTILE}", formula=f"y = {HOSTILE}",
                               cases=tuple(dataclasses.replace(c, note=f"{c.note} {HOSTILE}")
                                           for c in task.cases))
    return run_bench(task, torch_stand_in_conv(torch.tanh), ["fused", "semi"], SOC,
                     progress=False)


def test_bench_page_escapes_operator_case_and_note_names(hostile_result):
    page = bench_html(hostile_result)
    _assert_escaped(page, times=2 + 2 + 1)  # title and heading, a note per case, the formula
    cases = _Page(page)
    assert "table" in cases.tags and cases.tags.count("img") == 3


def test_tune_page_escapes_title_knob_values_and_reasons():
    space = Space(knobs=(("tile", (HOSTILE, "b")),))
    trials = (TrialRecord(0, {"tile": HOSTILE}, "infeasible", None, f"does not fit: {HOSTILE}",
                          None, 0.0),
              TrialRecord(1, {"tile": "b"}, "ok", 2.0, "", 2.0, 0.0))
    result = TuneResult(space=space, objective="device_time_us", sampler="grid",
                        backend="serial", workers=1, seed=0, budget=2, trials=trials,
                        study_name="s", storage=None, interrupted=False, wall_s=0.0)
    _assert_escaped(tune_html(result, f"Tuning {HOSTILE}", 5), times=2 + 1 + 1)
