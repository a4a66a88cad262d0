"""z = 2x in tiles of 256, with the tail tile's offset computed wrongly."""
import asc
import torch

TILE = 256


@asc.jit
def double(x: asc.GlobalAddress, z: asc.GlobalAddress, n: asc.ConstExpr[int]):
    gx, gz = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gz.set_global_buffer(z)
    pipe = asc.TPipe()
    qin = asc.TQue(asc.TPosition.VECIN, 1)
    qout = asc.TQue(asc.TPosition.VECOUT, 1)
    pipe.init_buffer(que=qin, num=1, len=4 * TILE)
    pipe.init_buffer(que=qout, num=1, len=4 * TILE)
    full, tail = n // TILE, n % TILE
    for i in range(full + (1 if tail else 0)):
        count = TILE if i < full else tail
        start = i * TILE if i < full else (full - 1) * TILE  # bug: should be full * TILE
        a = qin.alloc_tensor(asc.float32)
        asc.data_copy(a, gx[i * TILE:], count)
        qin.enque(a)
        a = qin.deque(asc.float32)
        o = qout.alloc_tensor(asc.float32)
        asc.muls(o, a, 2.0, count)
        qout.enque(o)
        qin.free_tensor(a)
        o = qout.deque(asc.float32)
        asc.data_copy(gz[start:], o, count)  # mark: tail-store
        qout.free_tensor(o)


x = torch.arange(4 * TILE + 64, dtype=torch.float32)
z = torch.zeros_like(x)
double[1](x, z, x.numel())
torch.testing.assert_close(z, 2 * x)
print("ok")
