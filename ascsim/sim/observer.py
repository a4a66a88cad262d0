"""What a launch tells its observers (the kernel checks, a user's recorder): the hooks, once.

An observer is made per launch by a factory (``LaunchOptions.observers``, ``factory(launch)``)
and then told, in simulated order, about every step of the machine. :class:`Observer` has every
hook the machine calls on each observer, as a method that does nothing, so an observer
overrides only what it watches.

Hooks called on every observer:

* ``on_instr(core, instr)`` -- an instruction was placed on its pipe's timeline;
* ``on_gate(core, gate, action, loc)`` -- a buffer gate (queue slot) was acquired or released;
* ``on_set_flag(core, src, dst, event_id, loc)`` / ``on_wait_flag(core, src, dst, event_id,
  loc, set_loc=None)`` -- an intra-core flag was set / waited for;
* ``on_barrier(core, pipe, loc)`` -- a pipe barrier;
* ``on_wave_start(launch, cores)`` -- a wave of cores is about to run;
* ``on_launch_end(launch)`` -- every wave has finished, before the report is made.

Hooks called only on observers that define them (``ascsim.sim.sync.notify``): ``on_mutex``,
``on_cross_core_set``, ``on_cross_core_wait``, ``on_cross_core_release`` and
``on_cross_core_edge``; and ``release()``, called when the launch drops its records.
"""

from __future__ import annotations


class Observer:
    """A launch observer that watches nothing: subclass it and override the hooks you need."""

    def on_instr(self, core, instr) -> None:
        """An instruction was placed on its pipe's timeline."""

    def on_gate(self, core, gate, action: str, loc) -> None:
        """A buffer gate was acquired or released."""

    def on_set_flag(self, core, src, dst, event_id, loc) -> None:
        """An intra-core flag was set."""

    def on_wait_flag(self, core, src, dst, event_id, loc, set_loc=None) -> None:
        """An intra-core flag was waited for (``set_loc``: the set that met it)."""

    def on_barrier(self, core, pipe, loc) -> None:
        """A pipe barrier."""

    def on_wave_start(self, launch, cores) -> None:
        """A wave of cores is about to run."""

    def on_launch_end(self, launch) -> None:
        """Every wave has finished; the report comes next."""
