"""ListTensorDesc / TensorDesc: decoding a list of GM tensors laid out as Ascend C reads it,
and the findings for layouts and indices Ascend C's asserts reject."""

from __future__ import annotations

import numpy as np

import ascsim.asc as asc
from ascsim.session import SESSION

A = np.arange(6, dtype=np.float32)
B = np.arange(6, dtype=np.float32) + 100


def _with_shapes() -> np.ndarray:
    """Two tensors of shape (2, 3): word 0, two descriptions of 3 words, two pointers."""
    return np.array([56, 2 | 0 << 32, 2, 3, 2 | 1 << 32, 2, 3, 0, 0], dtype=np.uint64)


def _pointers_only() -> np.ndarray:
    """Two tensors, no shapes: word 0 = 24, a header with the count, 0xffffffff, pointers."""
    return np.array([24, 0 | 2 << 32, 0xFFFF_FFFF, 0, 0], dtype=np.uint64)


@asc.jit
def _decode(lst: asc.GlobalAddress, a: asc.GlobalAddress, b: asc.GlobalAddress,
            out: asc.GlobalAddress, first_pointer: int, length: int, with_shapes: int):
    words, ga, gb, go = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(), \
        asc.GlobalTensor()
    words.set_global_buffer(lst)
    ga.set_global_buffer(a)
    gb.set_global_buffer(b)
    go.set_global_buffer(out)
    words.set_value(first_pointer, ga.get_phy_addr())
    words.set_value(first_pointer + 1, gb.get_phy_addr())
    tensors = asc.ListTensorDesc(data=lst, length=length, shape_size=2)
    go.set_value(0, tensors.get_size())
    if with_shapes:
        desc = asc.TensorDesc(dtype=asc.float32)
        desc.set_shape_addr(0)
        tensors.get_desc(desc, index=1)
        go.set_value(1, desc.get_dim())
        go.set_value(2, desc.get_index())
        go.set_value(3, desc.get_shape(0))
        go.set_value(4, desc.get_shape(1))
        obj = desc.get_data_obj()
        for i in range(6):
            go.set_value(5 + i, obj.get_value(i))
    first = asc.GlobalTensor()
    first.set_global_buffer(tensors.get_data_ptr(index=0, dtype=asc.float32))
    go.set_value(11, first.get_value(3))


def _run(words: np.ndarray, first_pointer: int, length: int, with_shapes: int):
    out = np.zeros(12, np.float32)
    with SESSION.collect() as run:
        _decode[1](words, A.copy(), B.copy(), out, first_pointer, length, with_shapes)
    return out, run.reports[0].findings


def test_a_list_with_shapes_gives_each_tensor_its_shape_and_data():
    out, findings = _run(_with_shapes(), 7, 72, 1)
    assert not findings
    np.testing.assert_array_equal(out[:5], [2, 2, 1, 2, 3])  # count, dim, index, shape
    np.testing.assert_array_equal(out[5:11], B)
    assert out[11] == A[3]


def test_a_pointers_only_list():
    out, findings = _run(_pointers_only(), 3, 40, 0)
    assert not findings
    assert out[0] == 2 and out[11] == A[3]


def test_an_inconsistent_layout_and_a_wrong_length_are_findings():
    words = _with_shapes()
    words[0] = 64  # the pointers are at byte 56
    out, findings = _run(words, 7, 99, 0)
    messages = [f.message for f in findings if f.category == "list-tensor"]
    assert any("inconsistent" in m for m in messages)
    assert any("length 99" in m for m in messages)


@asc.jit
def _misuse(out: asc.GlobalAddress):
    desc = asc.TensorDesc()
    go = asc.GlobalTensor()
    go.set_global_buffer(out)
    go.set_value(0, desc.get_shape(0))
    go.set_value(1, desc.get_dim())


def test_reading_an_empty_descriptor_is_a_finding():
    out = np.full(2, 9, np.float32)
    with SESSION.collect() as run:
        _misuse[1](out)
    findings = run.reports[0].findings
    assert [f.category for f in findings] == ["list-tensor"]
    assert "get_shape(0) with dim 0" in findings[0].message
    np.testing.assert_array_equal(out, [0, 0])


@asc.jit
def _null_pointer(lst: asc.GlobalAddress, out: asc.GlobalAddress):
    tensors = asc.ListTensorDesc(data=lst)
    g, go = asc.GlobalTensor(), asc.GlobalTensor()
    g.set_global_buffer(tensors.get_data_ptr(index=0, dtype=asc.float32))
    go.set_global_buffer(out)
    go.set_value(0, g.get_value(0))


def test_a_pointer_into_no_allocation_reads_as_out_of_bounds():
    out = np.zeros(2, np.float32)
    with SESSION.collect() as run:
        _null_pointer[1](np.zeros(8, np.uint64), out)
    categories = [f.category for f in run.reports[0].findings]
    assert categories == ["list-tensor", "list-tensor", "gm-out-of-bounds"]
    assert "unmapped@0x0" in run.reports[0].findings[2].message
    assert np.isnan(out[0])  # the fill bytes past every allocation
