"""z = 2x over 2 tiles, checked with numpy.testing -- but only the first tile is computed."""
import asc
import numpy as np

T = 64


@asc.jit
def double(x: asc.GlobalAddress, z: asc.GlobalAddress):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=4 * 4 * T)
    a = buf.get(asc.float32)
    o = a[2 * T:]
    gx, gz = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gz.set_global_buffer(z)
    asc.data_copy(a, gx, 2 * T)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.muls(o, a, 2.0, T)  # bug: 2 * T elements
    asc.set_flag(asc.HardEvent.V_MTE3, 0)
    asc.wait_flag(asc.HardEvent.V_MTE3, 0)
    asc.data_copy(gz, o, 2 * T)  # mark: copy-out


x = np.arange(2 * T, dtype=np.float32)
z = np.zeros_like(x)
double[1](x, z)
np.testing.assert_allclose(z, 2 * x)
