"""Debug operations: ``printf``, ``pto_assert``, ``trap``.

``printf`` writes to the process's standard output (the device log of a real run), one line per
call and core, in PyPTO Pro's subset of C conversions. ``pto_assert`` prints PyPTO Pro's
failure line and is a finding (the device goes on); ``trap`` stops the kernel.
"""

from __future__ import annotations

import linecache
import re
import sys

from ascsim.isa import ScalarOps
from ascsim.pto.errors import ParserSyntaxError
from ascsim.pto.ops.common import KernelError, current_core, user_location

#: The conversions PyPTO Pro's printf accepts: %[flags][width][.precision](d|i|u|x|f|p).
CONVERSION = re.compile(r"%([-+ #0]*)(\d*)(?:\.(\d+))?([a-zA-Z%])")
ALLOWED = frozenset("diuxfp")


def format_device(fmt: str, args: tuple, loc) -> str:
    """``fmt`` % ``args`` with PyPTO Pro's conversions (others are refused)."""
    pieces = []
    pos = 0
    values = list(args)
    for match in CONVERSION.finditer(fmt):
        flags, width, precision, conv = match.groups()
        if conv not in ALLOWED:
            raise ParserSyntaxError(f"printf: unsupported conversion %{conv} (PyPTO Pro "
                                    "accepts %d %i %u %x %f %p)", loc)
        if not values:
            raise ParserSyntaxError("printf: more conversions than arguments", loc)
        value = values.pop(0)
        spec = f"%{flags}{width}{'.' + precision if precision else ''}"
        if conv in "diu":
            text = (spec + "d") % int(value)
        elif conv == "x":
            text = (spec + "x") % int(value)
        elif conv == "f":
            text = (spec + "f") % float(value)
        else:
            text = (spec + "s") % hex(id(value))
        pieces.append(fmt[pos:match.start()])
        pieces.append(text)
        pos = match.end()
    if values:
        raise ParserSyntaxError("printf: more arguments than conversions", loc)
    pieces.append(fmt[pos:])
    return "".join(pieces)


def printf(fmt, *args, loc=False) -> None:
    """``pl.printf(fmt, *args, loc=False)``."""
    where = user_location()
    if not isinstance(fmt, str):
        raise ParserSyntaxError("printf: the format must be a string literal", where)
    text = format_device(fmt, args, where)
    core = current_core()
    core.execute(ScalarOps(1 + len(args), where))
    if loc:
        text = f"[{where[0]}:{where[1]}] {text}"
    sys.stdout.write(text)
    sys.stdout.flush()


def pto_assert(cond, fmt=None, *args, loc=False) -> None:
    """``pl.pto_assert(cond, fmt=None, *args)``: on failure, PyPTO Pro's line and a finding."""
    where = user_location()
    if not isinstance(cond, bool) and type(cond).__name__ != "bool_":
        raise TypeError(f"pto_assert: the condition must be a bool scalar, got "
                        f"{type(cond).__name__}")
    core = current_core()
    core.execute(ScalarOps(1, where))
    if cond:
        return
    source = linecache.getline(where[0], where[1]).strip()
    match = re.search(r"pto_assert\((.*?)(?:,|\)\s*$)", source)
    text = f"Assertion failed: {match.group(1) if match else source}"
    if fmt is not None:
        text += " " + format_device(fmt, args, where)
    sys.stdout.write(text + "\n")
    core.launch.findings.report("assert", text, where, core=core.core_id)


def trap() -> None:
    """``pl.trap()``: the kernel stops here."""
    raise KernelError("pl.trap(): the kernel aborted", user_location())


OPS = {"printf": printf, "pto_assert": pto_assert, "trap": trap}
