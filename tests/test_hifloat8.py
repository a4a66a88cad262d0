"""HiFloat8: the value of every code by the format's rules, and fp32 -> HiF8 rounding (nearest,
ties away from zero, saturating)."""

from __future__ import annotations

import numpy as np
import pytest

from ascsim.sim import hifloat8 as hif8

# (code, value) by the table in the module docstring, one or more per dot field.
KNOWN = [
    (0x00, 0.0), (0x01, 2.0 ** -22), (0x07, 2.0 ** -16),       # 0000: zero and the ladder
    (0x08, 1.0), (0x0F, 1.875), (0x88, -1.0),                  # 0001: 2^0
    (0x10, 2.0), (0x18, 0.5), (0x13, 2.75),                    # 001: 2^±1
    (0x20, 4.0), (0x28, 8.0), (0x30, 0.25), (0x27, 7.5),       # 01: 2^±(2..3)
    (0x40, 16.0), (0x4C, 128.0), (0x50, 2.0 ** -4), (0x41, 20.0),  # 10: 2^±(4..7)
    (0x60, 256.0), (0x6E, 32768.0), (0x70, 2.0 ** -8), (0x7F, -0.0 + 1.5 * 2.0 ** -15),
]


@pytest.mark.parametrize("code, value", KNOWN)
def test_known_codes(code, value):
    assert hif8.decode(np.array([code]))[0] == np.float32(value)


def test_specials_and_range():
    assert np.isnan(hif8.VALUES[0x80]) and np.isnan(hif8.VALUES).sum() == 1
    assert hif8.VALUES[0x6F] == np.inf and hif8.VALUES[0xEF] == -np.inf
    assert hif8.MAX_FINITE == 2.0 ** 15
    finite = hif8.VALUES[np.isfinite(hif8.VALUES)]
    assert finite.size == 253 and np.unique(finite).size == 253  # no value twice


def test_every_finite_code_round_trips():
    codes = np.flatnonzero(np.isfinite(hif8.VALUES)).astype(np.uint8)
    assert (hif8.encode(hif8.decode(codes)) == codes).all()


def test_rounding_is_to_nearest_with_ties_away_from_zero():
    # 1.0 and 1.125 are neighbours (0001 field): the midpoint goes up, a little below goes down.
    assert hif8.decode(hif8.encode(np.array([1.0625, 1.06, -1.0625])))[()].tolist() == [
        1.125, 1.0, -1.125]
    # Below the smallest step: the midpoint of 0 and 2^-22 rounds away from zero, less to +0.
    assert hif8.encode(np.array([2.0 ** -23, 2.0 ** -24, -2.0 ** -24])).tolist() == [1, 0, 0]


def test_saturation_and_nan():
    got = hif8.decode(hif8.encode(np.array([1e6, -np.inf, np.inf, 40000.0])))
    assert got.tolist() == [32768.0, -32768.0, 32768.0, 32768.0]
    assert hif8.encode(np.array([np.nan]))[0] == hif8.NAN_CODE


def test_encoding_picks_the_nearest_value_everywhere():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(5000) * 10.0 ** rng.uniform(-7, 5, 5000)).astype(np.float32)
    got = hif8.decode(hif8.encode(x)).astype(np.float64)
    finite = np.sort(hif8.VALUES[np.isfinite(hif8.VALUES)].astype(np.float64))
    x64 = np.clip(x.astype(np.float64), -32768, 32768)
    best = np.abs(finite[None, :] - x64[:, None]).min(axis=1)
    assert (np.abs(got - x64) == best).all()
