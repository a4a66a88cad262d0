"""Vector add, z = x + y, with hand-placed UB buffers and hand-written pipe synchronisation.

Each core owns one contiguous slice of the inputs and walks it tile by tile. Two slots per
operand (ping and pong) let the copy-in of tile i+1 overlap the add and copy-out of tile i. The
only ordering the hardware does not give for free is expressed with events:

* ``MTE2_V``    slot s holds fresh inputs: the vector unit may read them;
* ``V_MTE3``    slot s holds a finished sum: MTE3 may write it to GM;
* ``MTE3_MTE2`` slot s has been written back: MTE2 may refill it. Both slots start out free,
                so this event is raised once per slot before the loop and consumed after it.

Run it with ``ascsim run examples/vector_add_flags.py -r Model -v Ascend910B1``.
"""


import asc
import asc.lib.runtime as rt
import asc.runtime.config as config
import torch
from example_cli import platform_from_cli

SLOTS = 2  # ping-pong
DEFAULT_LENGTH = 8 * 2048
DEFAULT_CORES = 8
DEFAULT_TILE = 256  # elements per tile: 1 KiB of fp32, a multiple of the 32-byte UB block


@asc.jit
def add_with_events(x: asc.GlobalAddress, y: asc.GlobalAddress, z: asc.GlobalAddress,
                    per_core: asc.ConstExpr[int], tile: asc.ConstExpr[int]):
    first = asc.get_block_idx() * per_core
    x_gm, y_gm, z_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    x_gm.set_global_buffer(x + first, per_core)
    y_gm.set_global_buffer(y + first, per_core)
    z_gm.set_global_buffer(z + first, per_core)

    # UB layout (bytes): [x ping | x pong][y ping | y pong][z ping | z pong].
    region = SLOTS * tile * x.dtype.sizeof()
    x_ub = asc.LocalTensor(x.dtype, asc.TPosition.VECIN, 0, SLOTS * tile)
    y_ub = asc.LocalTensor(y.dtype, asc.TPosition.VECIN, region, SLOTS * tile)
    z_ub = asc.LocalTensor(z.dtype, asc.TPosition.VECOUT, 2 * region, SLOTS * tile)

    for slot in range(SLOTS):
        asc.set_flag(asc.HardEvent.MTE3_MTE2, slot)

    for step in range(per_core // tile):
        slot = step % SLOTS
        ub_at = slot * tile
        gm_at = step * tile

        asc.wait_flag(asc.HardEvent.MTE3_MTE2, slot)
        asc.data_copy(x_ub[ub_at:], x_gm[gm_at:], tile)
        asc.data_copy(y_ub[ub_at:], y_gm[gm_at:], tile)
        asc.set_flag(asc.HardEvent.MTE2_V, slot)

        asc.wait_flag(asc.HardEvent.MTE2_V, slot)
        asc.add(z_ub[ub_at:], x_ub[ub_at:], y_ub[ub_at:], tile)
        asc.set_flag(asc.HardEvent.V_MTE3, slot)

        asc.wait_flag(asc.HardEvent.V_MTE3, slot)
        asc.data_copy(z_gm[gm_at:], z_ub[ub_at:], tile)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, slot)

    for slot in range(SLOTS):
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, slot)


def vector_add(x: torch.Tensor, y: torch.Tensor, cores: int = DEFAULT_CORES,
               tile: int = DEFAULT_TILE):
    """Launch the kernel on ``cores`` cores; returns (z, launch report)."""
    total = x.numel()
    if total % (cores * tile):
        raise ValueError(f"{total} elements do not split into {cores} cores x whole "
                         f"{tile}-element tiles")
    z = torch.zeros_like(x)
    report = add_with_events[cores, rt.current_stream()](x, y, z, total // cores, tile)
    return z, report


def run(platform=None, length: int = DEFAULT_LENGTH, cores: int = DEFAULT_CORES,
        tile: int = DEFAULT_TILE):
    """Simulate one add on ``platform`` (default: the runner's), check it, return the report."""
    config.set_platform(config.Backend.Model, platform)
    x = torch.rand(length, dtype=torch.float32)
    y = torch.rand(length, dtype=torch.float32)
    z, report = vector_add(x, y, cores, tile)
    if not torch.allclose(z, x + y):
        worst = (z - (x + y)).abs().max().item()
        raise AssertionError(f"vector_add_flags: wrong sum (max abs error {worst:.3g})")
    return report


if __name__ == "__main__":
    report = run(platform_from_cli(__doc__))
    print(f"vector_add_flags: z = x + y correct on {report.soc}, "
          f"{report.device_time_us:.2f} us simulated")
