"""y = x through a GM workspace: block 1 produces, block 0 consumes -- with no sync_all."""
import asc
import torch

N = 256


@asc.jit
def hand_back(x: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * N)
    t = buf.get(asc.float32)
    gx, gw, gy = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gw.set_global_buffer(ws)
    gy.set_global_buffer(y)
    if asc.get_block_idx() == 1:
        asc.data_copy(t, gx, N)
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gw, t, N)  # mark: produce
    # missing: asc.sync_all()
    if asc.get_block_idx() == 0:
        asc.data_copy(t, gw, N)  # mark: consume
        asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
        asc.data_copy(gy, t, N)


x = torch.rand(N)
ws, y = torch.zeros(N), torch.zeros(N)
hand_back[2](x, ws, y)
assert torch.allclose(y, x)
print("ok")
