"""Findings of the kernel checks: what went wrong, where, and the usual fix.

A finding is reported once per (category, lines) so a bug inside a loop shows up one time with a
count. In strict mode the first finding raises :class:`CheckError` instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ascsim.sim.errors import CheckError
from ascsim.sim.source import Location, format_location


@dataclass
class Finding:
    """One problem found while simulating a kernel."""

    category: str
    message: str
    locations: tuple[Location, ...]
    hint: str = ""
    core: int | None = None
    count: int = 1
    details: dict = field(default_factory=dict)

    def format(self) -> str:
        where = ", ".join(format_location(loc) for loc in self.locations)
        times = f" (x{self.count})" if self.count > 1 else ""
        core = f" [core {self.core}]" if self.core is not None else ""
        hint = f"\n    hint: {self.hint}" if self.hint else ""
        return f"{self.category}{core}{times}: {where}: {self.message}{hint}"

    def to_json(self) -> dict:
        return {
            "category": self.category,
            "message": self.message,
            "locations": [{"file": f, "line": n} for f, n in self.locations],
            "hint": self.hint,
            "core": self.core,
            "count": self.count,
            "details": self.details,
        }


class FindingLog:
    """Collects findings of one launch, merging repeats of the same problem."""

    def __init__(self, strict: bool = False):
        self.strict = strict
        self.findings: list[Finding] = []
        self._index: dict[tuple, Finding] = {}

    def report(
        self,
        category: str,
        message: str,
        locations: tuple[Location, ...] | Location,
        hint: str = "",
        core: int | None = None,
        **details,
    ) -> None:
        if locations and isinstance(locations[0], str):
            locations = (locations,)
        key = (category, tuple(locations))
        seen = self._index.get(key)
        if seen is not None:
            seen.count += 1
            return
        finding = Finding(category, message, tuple(locations), hint, core, 1, details)
        self._index[key] = finding
        self.findings.append(finding)
        if self.strict:
            raise CheckError(f"{category}: {message}" + (f" (hint: {hint})" if hint else ""),
                             locations[0] if locations else None)

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self):
        return iter(self.findings)
