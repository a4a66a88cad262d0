"""``ascsim diff SCRIPT --soc A --soc B`` (issue 35 part 5): end to end on kernels whose
behaviour differs between the 910B (48 AIV, 192 KiB UB) and the 950 (56 AIV, 248 KiB UB)."""

from __future__ import annotations

import textwrap

from ascsim.cli import main
from ascsim.diff import diff_findings, drop_platform, pair_launches

A, B = "Ascend910B1", "Ascend950PR_9579"

COPY = '''
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x + first, count)
    gy.set_global_buffer(y + first, count)
    asc.data_copy(t, gx, count)
    asc.set_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.wait_flag(asc.HardEvent.MTE2_MTE3, 0)
    asc.data_copy(gy, t, count)
'''

# The work split over every AIV of the chip: whole 32-byte blocks per core on 48 AIVs, 54
# floats (216 B) per core on 56 -- an alignment finding on the 950 only.
SPLIT = textwrap.dedent('''
    import numpy as np
    import asc
    import asc.lib.host as host

    TOTAL = 48 * 64

    @asc.jit
    def copy_split(x: asc.GlobalAddress, y: asc.GlobalAddress, count: asc.ConstExpr[int]):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=4 * 64)
        t = buf.get(asc.float32)
        first = asc.get_block_idx() * count
''') + textwrap.indent(textwrap.dedent(COPY), "    ") + textwrap.dedent('''
    cores = host.PlatformAscendCManager.get_instance().get_core_num_aiv()
    x = np.arange(TOTAL, dtype=np.float32)
    copy_split[cores](x, np.zeros(TOTAL, np.float32), TOTAL // cores)
''')

# A 200 KiB UB buffer: more than the 910B's UB holds, within the 950's.
CAPACITY = textwrap.dedent('''
    import numpy as np
    import asc

    @asc.jit
    def big_tile(x: asc.GlobalAddress, y: asc.GlobalAddress, count: asc.ConstExpr[int]):
        pipe = asc.TPipe()
        buf = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(buf=buf, num=200 * 1024)
        t = buf.get(asc.float32)
        first = 0
''') + textwrap.indent(textwrap.dedent(COPY), "    ") + textwrap.dedent('''
    big_tile[1](np.ones(64, np.float32), np.zeros(64, np.float32), 64)
''')


def _diff(tmp_path, capsys, text: str, *socs: str, args=()) -> tuple[int, str]:
    """``ascsim diff`` (its two runs are processes of their own); (status, what it printed)."""
    script = tmp_path / "k.py"
    script.write_text(text)
    cmd = ["diff"]
    for soc in socs:
        cmd += ["--soc", soc]
    status = main([*cmd, str(script), *args])
    return status, capsys.readouterr().out


def test_drop_platform():
    assert drop_platform(["-r", "Model", "-v", A, "--n", "3"]) == (["-r", "Model", "--n", "3"], A)
    assert drop_platform([f"-v{B}"]) == ([], B)
    assert drop_platform(["--verbose"]) == (["--verbose"], None)


def test_pairing_and_findings_by_kernel_and_occurrence():
    def rep(kernel, *lines):
        return {"kernel": kernel, "findings": [
            {"category": "alignment", "message": f"m{n}", "locations": [{"file": "k.py",
                                                                           "line": n}]}
            for n in lines]}
    a = [rep("k", 3), rep("j"), rep("k", 3, 5)]
    b = [rep("k", 3), rep("k", 3, 7)]
    pairs = pair_launches(a, b)
    assert [(p.kernel, p.occurrence, p.a is not None, p.b is not None) for p in pairs] == [
        ("k", 1, True, True), ("j", 1, True, False), ("k", 2, True, True)]
    found = diff_findings(pairs[2].a, pairs[2].b)
    assert [f["message"] for f in found.only_a] == ["m5"]
    assert [f["message"] for f in found.only_b] == ["m7"]
    assert found.both == 1


def test_diff_finding_on_one_soc_only(tmp_path, capsys):
    status, out = _diff(tmp_path, capsys, SPLIT, A, B, args=["-v", A])
    assert status == 1, out
    assert f"the script's -v {A} is dropped" in out
    assert f"ascsim diff: {A} vs {B}" in out
    table = out[out.index("copy_split"):]
    time_row = next(line for line in table.splitlines() if "device time µs" in line)
    assert "x" in time_row.split()[-1]  # the B / A ratio
    assert "findings on one SoC and not the other" in out
    rows = [line for line in out.splitlines() if line.strip().startswith("alignment")]
    assert len(rows) == 2 and all("k.py:" in r for r in rows)
    # (finding, lines, on A, on B, message): on the 950 only
    assert all([c.strip() for c in r.split("│")][2:4] == ["-", "yes"] for r in rows)
    assert out.count("216 B") == 2
    assert "the SoCs differ" in out


def test_diff_capacity_error_and_same_socs(tmp_path, capsys):
    status, out = _diff(tmp_path, capsys, CAPACITY, A, B)
    assert status == 1
    assert f"the script failed on {A} (exit 1)" in out
    assert "UB holds 196608 B on" in out
    assert "(stopped with an error)" in out

    status, out = _diff(tmp_path, capsys, SPLIT, A, "Ascend910B2")
    assert status == 0, out
    assert "same kernels and findings on both SoCs" in out


def test_diff_usage_errors(tmp_path, capsys):
    status, out = _diff(tmp_path, capsys, SPLIT, A)
    assert status == 2 and "exactly two SoCs" in out
    status, out = _diff(tmp_path, capsys, SPLIT, A, "Ascend999")
    assert status == 2 and "unknown SoC" in out
