"""A struct argument as kernels see it: each core's own copy once it writes, runtime ints, the
C field type's wrap-around read back, and the host's struct left as it was."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.asc.adv.norm import RmsNormTiling
from ascsim.asc.launcher import KernelStruct
from ascsim.asc.values import RuntimeInt


@asc.jit
def _struct_kernel(out: asc.GlobalAddress, tiling: RmsNormTiling):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    core = asc.get_block_idx()
    before = tiling.b_length
    if core == 0:
        tiling.b_length = before + 5  # only core 0's view changes
    g.set_value(core * 3, before)
    g.set_value(core * 3 + 1, tiling.b_length)
    g.set_value(core * 3 + 2, tiling.s_length)


def test_each_core_sees_its_own_writes_only_and_the_host_struct_is_unchanged():
    host = RmsNormTiling(b_length=7, s_length=3)
    out = np.zeros(9, np.int32)
    _struct_kernel[3](out, host)
    assert out.tolist() == [7, 12, 3, 7, 7, 3, 7, 7, 3]
    assert host.b_length == 7


def test_views_share_values_until_written_and_read_back_the_wrapped_field():
    host = RmsNormTiling(b_length=7)
    shared: dict = {}
    a, b = KernelStruct(host, shared), KernelStruct(host, shared)
    assert isinstance(a.b_length, RuntimeInt) and a.b_length == 7 and b.b_length == 7
    a.b_length = 2**32 + 9  # uint32 field: wraps to 9
    assert a.b_length == 9 and b.b_length == 7 and host.b_length == 7
    assert a.fields()["b_length"] == 9 and b.fields()["b_length"] == 7


# ------------------------------------------------- pyasc's Field / StructField declaration style
from ascsim.asc.language.core.dtype import KnownTypes as KT  # noqa: E402
from ascsim.asc.language.core.struct import Field, Struct, StructField  # noqa: E402


class _Block(Struct):
    length = Field(dtype=KT.int32, default=4)


class _Tile(Struct):
    length = Field(dtype=KT.uint16, default=0)
    scale = Field(dtype=KT.float32, default=0.5)


class _Config(Struct):
    block = StructField(_Block)
    tile = StructField(_Tile)


@asc.jit
def _nested_kernel(out: asc.GlobalAddress, config: _Config):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    g.set_value(0, config.block.length)
    g.set_value(1, config.tile.length)


def test_field_style_struct_packs_like_ctypes_and_nests():
    tile = _Tile(length=70000)  # uint16: wraps as the C field does
    config = _Config(tile=tile)
    config.block = _Block(length=9)
    assert config.block.length == 9 and config.tile.length == 70000 % 65536
    assert config.tile.scale == 0.5
    assert len(config.pack()) == 4 + 8  # int32, then uint16 + pad + float32
    copy = config.copy()
    copy.block.length = 1  # a nested member is written in place, and copies are deep
    assert copy.block.length == 1 and config.block.length == 9
    out = np.zeros(2, np.int32)
    _nested_kernel[1](out, config)
    assert out.tolist() == [9, 70000 % 65536]


def test_struct_field_errors_name_the_problem():
    import pytest

    with pytest.raises(TypeError, match="cannot hold 'bfloat16'"):
        Field(dtype=KT.bfloat16)
    with pytest.raises(TypeError, match="holds a _Block"):
        _Config().block = _Tile()


def test_data_type_by_name():
    assert asc.DataType("int32") == asc.int32 and asc.DataType("int32").sizeof() == 4


@asc.jit
def _struct_in_kernel(out: asc.GlobalAddress):
    g = asc.GlobalTensor()
    g.set_global_buffer(out)
    block = _Block(length=10)
    g.set_value(0, block.length.ceildiv(4))  # fields of a kernel-built struct are runtime ints


def test_a_struct_built_in_a_kernel_reads_runtime_ints():
    out = np.zeros(1, np.int32)
    _struct_in_kernel[1](out)
    assert out[0] == 3
    assert type(_Block(length=10).length) is int  # on the host: plain ints
