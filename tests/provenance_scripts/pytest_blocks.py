import asc
import torch

T = 64


@asc.jit
def block_tiles(x: asc.GlobalAddress, z: asc.GlobalAddress, wrong: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=2 * 4 * T)
    a = buf.get(asc.float32)
    o = a[T:]
    gx, gz = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gz.set_global_buffer(z)
    block = asc.get_block_idx()
    source = block + 1 if block == wrong else block
    asc.data_copy(a, gx[source * T:], T)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.adds(o, a, 1.0, T)
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz[block * T:], o, T)  # mark: block-out


def test_blocks():
    x = torch.arange(5 * T, dtype=torch.float32)
    z = torch.zeros(4 * T)
    block_tiles[4](x, z, 2)
    assert torch.allclose(z, x[:4 * T] + 1)
