"""The served Triton names and torch's own compiler stack in one process: torch probes for a GPU
Triton compiler (``import triton`` from ``torch.utils._triton`` and ``torch._inductor``) and must
find none, while the script's ``import triton`` still gets ascsim's."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_torch_dynamo_imports_beside_the_served_triton():
    code = textwrap.dedent("""
        from ascsim.triton import aliases
        aliases.install()
        import torch._dynamo  # imports inductor, which probes for a GPU Triton compiler
        from torch.utils._triton import has_triton_package
        assert not has_triton_package()
        import triton
        import triton.language as tl
        assert triton.__name__.startswith("ascsim.") and hasattr(tl, "load")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
