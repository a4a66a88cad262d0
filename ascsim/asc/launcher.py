"""Launching a kernel: converting host arguments, running the cores, copying results back.

Mirrors pyasc's launcher: every tensor argument (torch CPU tensor or numpy array) is copied into
device memory before the launch and copied back after it, inputs included (:mod:`ascsim.sim.host`);
Python ints become int32 runtime values and floats fp32; tiling structs are copied into each core.

A launch that pyasc would only compile (:func:`ascsim.asc.runtime.launcher.compile_only`: the
unit tests' mocked ``Launcher.run``, or ``DRY_RUN``) still runs on the simulator, since running
the kernel's Python is how ascsim reads it, but a fault of the machine (a ``KernelError``: a
queue used before ``init_buffer``, a cube buffer on a vector core, ...) then ends only that
core's code and becomes a ``compile-only-fault`` finding at the faulting line: pyasc's compile
step does not see such faults either, and on a device the kernel never runs. Errors in the form
of a call (an unknown name, a wrong keyword: Python's errors, ``CallFormError`` and the other
kernel errors that are also a TypeError or ValueError) still stop the launch, as they stop
pyasc's compile, and so does every fault under ``--strict``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ascsim.asc import dtypes
from ascsim.asc.hints import PYASC_HINTS
from ascsim.asc.runtime.launcher import compile_only, deliver
from ascsim.asc.struct import Struct
from ascsim.asc.values import GlobalAddress, RuntimeInt
from ascsim.isa.errors import CheckError, KernelError
from ascsim.session import SESSION
from ascsim.sim.host import HostArgument, describe, is_memory
from ascsim.sim.launch import Launch, LaunchConfig, LaunchOptions, fewer_collections
from ascsim.sim.memory import DeviceMemory
from ascsim.sim.report import KernelReport

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


class ServerMode(BaseException):  # noqa: N818 - not an error: the core's user code ends here
    """Raised on a MIX kernel's AIC by ``register_matmul``: from then on the AIC runs the
    Matmul server (driven by its AIVs' calls), not the rest of the kernel body."""


class KernelStruct:
    """A struct as a kernel sees it: a private copy whose integer fields are runtime ints.

    Kernels read tiling fields on every step and rarely write them, so the copy is made at the
    first write (until then the host's struct, which nothing changes during the launch, is
    read), and each field's kernel value is made once and kept until the field is written.
    """

    __slots__ = ("_struct", "_private", "_values")

    def __init__(self, struct: Struct, values: dict | None = None):
        """``values``: a field cache shared by the views of one host struct (until they write)."""
        object.__setattr__(self, "_struct", struct)
        object.__setattr__(self, "_private", False)
        object.__setattr__(self, "_values", {} if values is None else values)

    def __getattr__(self, name):
        values = self._values
        if name in values:
            return values[name]
        value = getattr(self._struct, name)
        if isinstance(value, int):
            value = RuntimeInt(value)
        values[name] = value
        return value

    def __setattr__(self, name, value):
        if not self._private:
            object.__setattr__(self, "_struct", self._struct.copy())
            object.__setattr__(self, "_private", True)
            # Its own cache: the shared one holds the host's values and methods.
            object.__setattr__(self, "_values", {})
        setattr(self._struct, name, value)
        self._values.pop(name, None)  # read back: the field's C type may have wrapped it

    def __repr__(self):
        return f"kernel view of {self._struct!r}"


def _element_type(value) -> dtypes.DataType:
    """The kernel-side data type of a memory argument's elements (bytes are uint8)."""
    if isinstance(value, (bytes, bytearray)):
        return dtypes.uint8
    return dtypes.as_dtype(value.dtype)


def convert_scalar(name: str, value):
    """Runtime scalar argument → the value the kernel sees (int32 / fp32 / numpy scalar)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if not INT32_MIN <= value <= INT32_MAX:
            raise ValueError(f"argument {name!r} = {value} does not fit the kernel's int32")
        return RuntimeInt(value)
    if isinstance(value, float):
        return np.float32(value)
    if isinstance(value, np.generic):
        return value
    raise TypeError(
        f"argument {name!r} of type {type(value).__name__} cannot be passed to a kernel at run "
        "time (str, tuple, list and dict are only allowed as asc.ConstExpr parameters)")


def run_launch(name: str, body, args: dict, constexpr: set, block_num: int, kind: str,
               options: LaunchOptions | None = None, vf_fusion: bool = False) -> KernelReport:
    """Convert ``args``, run ``body(**converted)`` on every core, copy back; returns the report.

    ``options``: how the launch runs; the session's settings (:meth:`Session.launch_options`)
    when None. The report (and the launch, if a collector keeps launches) goes to the session.
    ``vf_fusion``: the kernel's compile option (:class:`LaunchConfig` ``vector_functions``).
    """
    session = SESSION
    if options is None:
        options = session.launch_options()
    soc = session.soc
    memory = DeviceMemory()
    host_args: list[HostArgument] = []
    converted: dict = {}
    structs: dict = {}
    for pname, value in args.items():
        if pname in constexpr:
            converted[pname] = value
        elif is_memory(value):
            element = _element_type(value)
            host = HostArgument(pname, value, memory)
            host_args.append(host)
            converted[pname] = GlobalAddress(host.buffer, 0, element)
        elif isinstance(value, Struct):
            structs[pname] = value
        else:
            converted[pname] = convert_scalar(pname, value)
    config = LaunchConfig(kernel=name, soc=soc, block_num=block_num, kind=kind,
                          vector_functions=vf_fusion,
                          arguments=tuple((host.buffer.name, describe(host.value))
                                          for host in host_args))
    launch = Launch(config, memory, replace(options, hints=PYASC_HINTS))

    # The cores' views of a struct share their field values until one of them writes.
    struct_values: dict = {pname: {} for pname in structs}

    tolerant = compile_only()

    def per_core(core):
        kw = dict(converted)
        for pname, struct in structs.items():
            kw[pname] = KernelStruct(struct, struct_values[pname])
        try:
            body(**kw)
        except ServerMode:
            pass  # the AIC turned into its AIVs' Matmul server: its own code ends here
        except KernelError as exc:
            if not (tolerant and is_machine_fault(exc)):
                raise
            _compile_only_fault(launch, exc, core.core_id)  # this core's code ends here

    per_core.waves = True  # the pyasc front-end takes the block index as a lane value
    # A launch that could not wave is remembered by its kernel and signature: the compile-time
    # arguments are part of it (they choose the kernel's code).
    per_core.wave_key = tuple((pname, repr(args[pname])) for pname in sorted(constexpr)
                              if pname in args)

    with fewer_collections():
        try:
            try:
                report = launch.run(per_core, reset=_reset_structs(struct_values))
            except KernelError as exc:  # a deadlock of cores that stopped at a fault
                if not (tolerant and is_machine_fault(exc)):
                    raise
                _compile_only_fault(launch, exc, None)
                report = launch.partial_report()
        except BaseException:
            # The kernel failed (a fault, a deadlock, strict mode): keep what was found up to
            # there, so `ascsim check` can still list the findings next to the error.
            session.record(launch.partial_report(), launch)
            raise
        # pyasc's Launcher.run hands the results to the host (a timing-only launch computed
        # nothing: the host's tensors then stay as they are).
        deliver(name, block_num, host_args if launch.values else (), args,
                report.device_time_us, kind)
        session.record(report, launch)
        if not options.keep:
            # Nothing reads this launch any more: its GM bytes may serve later launches, and
            # its instruction records go now, by reference counting, instead of waiting for a
            # collection that would walk them all.
            memory.release()
            launch.release()
    return report


def _reset_structs(struct_values: dict):
    """The launch's reset (``Launch.run``): the fields the cores wrote into struct arguments
    are forgotten, so a second pass starts from the host's values."""
    def reset() -> None:
        for values in struct_values.values():
            values.clear()
    return reset


def is_machine_fault(exc: KernelError) -> bool:
    """Whether a kernel error is a fault of the machine, which a compile-only launch records
    as a finding: not a strict-mode stop, nor an error in the form of a call or an argument
    (those are also TypeError/ValueError, as pyasc's compile step raises them)."""
    return not isinstance(exc, (CheckError, TypeError, ValueError))


def _compile_only_fault(launch: Launch, exc: KernelError, core_id: int | None) -> None:
    """Record a machine fault of a compile-only launch as a finding at the faulting line."""
    text = str(exc)
    where = exc.where
    if where and text.startswith(f"{where[0]}:{where[1]}: "):
        text = text[len(f"{where[0]}:{where[1]}: "):]
    launch.findings.report(
        "compile-only-fault",
        f"pyasc only compiles this launch (Launcher.run is mocked, or DRY_RUN is set); run on "
        f"a device it would fault here, and the simulator ran this core no further: {text}",
        (tuple(where),) if where else (),
        hint="launch it with a real Launcher to run it (and give the kernel what the "
             "message asks for)",
        core=core_id)
