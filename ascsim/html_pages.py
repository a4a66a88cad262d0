"""HTML report pages rendered from the package's Jinja2 templates (``ascsim/templates``).

Every page extends ``base.html.j2``, which carries the one style sheet (``report.css``), so the
bench and tuning reports look alike. Autoescaping is on for every template: operator, case, note
and knob names reach the page as text, never as markup. Pages are self-contained (inline CSS,
plots as base64 PNG, no external resource).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from functools import cache

import jinja2


@dataclass(frozen=True)
class HtmlTable:
    """A table as the templates draw it: one heading row, then rows of text cells.

    The first ``left`` columns (names, notes) are left-aligned, the others (numbers) right-aligned;
    a cell whose text says FAIL is shown as a failure.
    """

    table_id: str
    head: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    left: int = 2

    @classmethod
    def of(cls, table_id: str, head, rows, left: int = 2) -> HtmlTable:
        return cls(table_id, tuple(head), tuple(tuple(r) for r in rows), left)


@dataclass(frozen=True)
class HtmlPlot:
    """A PNG figure embedded in the page."""

    plot_id: str
    alt: str
    png: bytes

    @property
    def src(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.PackageLoader("ascsim", "templates"),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)


def render_page(template: str, **context) -> str:
    """Render ``ascsim/templates/<template>`` with ``context`` (a missing name is an error)."""
    return _environment().get_template(template).render(**context)
