"""Bench reports: JSON, Markdown, and the HTML page rendered in headless Chromium."""

import json
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import torch
from test_bench_runner import SOC, tiny_conv_task, torch_stand_in_conv

from ascsim.bench.report import explain_case, to_markdown, write_reports
from ascsim.bench.runner import run_bench


@pytest.fixture(scope="module")
def result():
    task = tiny_conv_task().select([1, 5, 13])
    return run_bench(task, torch_stand_in_conv(torch.tanh), ["semi", "fused", "unfused"], SOC,
                     progress=False)


def test_explanations_name_the_drivers(result):
    lines = explain_case(result, 5)
    text = "\n".join(lines)
    assert "semi: " in text and "2 kernel(s)" in text and "cross-core hand-offs" in text
    assert "fastest: fused" in text
    semi_line = next(x for x in lines if x.startswith("semi is"))
    # semi vs fused: one more launch, fewer hand-offs, an fp32 workspace (128·28·28·4 B)
    assert "+1 kernel launch" in semi_line and "-25 cross-core hand-offs" in semi_line
    assert "workspace +392.0 KiB" in semi_line


def test_json_and_markdown(result, tmp_path):
    paths = write_reports(result, tmp_path)
    doc = json.loads(paths["json"].read_text())
    assert doc["soc"] == SOC and len(doc["runs"]) == 9 and len(doc["cases"]) == 3
    run = doc["runs"][0]
    assert run["timing"]["kernels"][0]["pipe_busy_us"] and run["precision"]["passed"]
    md = paths["md"].read_text()
    assert md == to_markdown(result)
    assert "| semi |" in md and "### Case 13" in md and "workspace" in md
    # the seed's published times are a column of their own, where it published one
    assert "seed µs" in md and "not scored" in md
    row5 = next(line for line in md.splitlines() if line.startswith("| 5 |"))
    row13 = next(line for line in md.splitlines() if line.startswith("| 13 |"))
    assert "| 3.40 |" in row5 and "| — |" in row13
    assert doc["task"]["references"][0]["times_us"] == {"1": 3.8, "5": 3.4}


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_html_is_self_contained(result, tmp_path):
    html = write_reports(result, tmp_path)["html"].read_text()
    p = _Tags()
    p.feed(html)
    imgs = [a for t, a in p.tags if t == "img"]
    assert {a["id"] for a in imgs} == {"plot-speedup", "plot-time", "plot-pipes"}
    assert all(a["src"].startswith("data:image/png;base64,") for a in imgs)
    assert not re.search(r'(src|href)="(http|//)', html) and "<style>" in html
    assert {a.get("id") for t, a in p.tags if t == "table"} == {"summary", "cases"}


CHROMIUM = shutil.which("chromium")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_html_renders_in_headless_chromium(result, tmp_path):
    html = write_reports(result, tmp_path)["html"]
    png = tmp_path / "shot.png"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}"]
    subprocess.run([CHROMIUM, *flags, f"--screenshot={png}", "--window-size=1280,2000",
                    f"file://{html}"], check=True, capture_output=True, timeout=120)
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", f"file://{html}"], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    assert dom.count("<img") == 3 and '<table id="cases">' in dom
    import matplotlib.image as mpimg

    img = mpimg.imread(png)[..., :3]
    assert img.shape[:2] == (2000, 1280)
    assert img.std() > 0.05                      # not a blank page
    # the plots are there: many distinct colours (bars, legend), not just text on white
    colours = np.unique((img[::4, ::4] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 200


PLOTS_LEAVE_THE_BACKEND = """
import sys
import matplotlib
matplotlib.use("svg")
import torch
from test_bench_runner import SOC, tiny_conv_task, torch_stand_in_conv
import ascsim.bench.report as bench_report
import ascsim.tune.report  # noqa: F401 - its import must not switch the backend either
from ascsim.bench.runner import run_bench
result = run_bench(tiny_conv_task().select([1]), torch_stand_in_conv(torch.tanh), ["fused"], SOC,
                   progress=False)
page = bench_report.to_html(result)
assert page.count("data:image/png;base64,iVBOR") == 3, "three PNG plots"
print(matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules)
"""


def test_reports_leave_the_processs_matplotlib_backend_alone():
    """Importing the report modules and drawing a report's plots neither chooses a backend nor
    imports pyplot: a notebook's or GUI's plotting set-up stays as the user made it."""
    done = subprocess.run([sys.executable, "-c", PLOTS_LEAVE_THE_BACKEND], capture_output=True,
                          text=True, timeout=300, cwd=Path(__file__).parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["svg", "False"]
