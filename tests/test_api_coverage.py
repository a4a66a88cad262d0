"""The list of pyasc's exported names and ``ascsim info --api``."""

from __future__ import annotations

import textwrap
import types

import pytest

from ascsim.asc import api_coverage
from ascsim.asc.api_coverage import (
    OUR_MODULES,
    NotOnSimulator,
    coverage,
    extract_names,
    reference_names,
    refusing,
    state_of,
)
from ascsim.cli import main


def test_the_list_covers_every_listed_module_with_unique_names():
    names = reference_names()
    assert set(names) == set(OUR_MODULES)
    for module, listed in names.items():
        assert listed and len(set(listed)) == len(listed), module
    assert {"jit", "GlobalTensor", "LocalTensor", "data_copy", "TPipe"} <= set(names["asc"])
    assert {"Matmul", "softmax"} <= set(names["asc.adv"])
    assert {"Launcher", "LaunchOptions"} <= set(names["asc.runtime.launcher"])


def test_states_of_names():
    module = types.SimpleNamespace(here=lambda: 1,
                                   no_sense=refusing("asc.lib.runtime.malloc", "GM is simulated"))
    assert state_of(module, "here") == "implemented"
    assert state_of(module, "no_sense") == "refuses"
    assert state_of(module, "gone") == "missing"
    assert state_of(None, "here") == "missing"
    # a submodule of ours is not pyasc's function of that name (asc.adv.softmax)
    module.softmax = types.ModuleType("ascsim.asc.adv.softmax")
    assert state_of(module, "softmax") == "missing"
    assert state_of(module, "softmax", frozenset({"softmax"})) == "implemented"
    with pytest.raises(NotOnSimulator, match="asc.lib.runtime.malloc is not meaningful on a "
                                             "simulator: GM is simulated"):
        module.no_sense(1024)


def test_coverage_counts_per_module():
    fake = {"m": types.SimpleNamespace(a=1, b=refusing("m.b", "why"))}
    (cov,) = coverage({"m": ("a", "b", "c", "d")}, fake)
    assert cov.names == {"implemented": ["a"], "refuses": ["b"], "missing": ["c", "d"]}
    assert cov.total == 4 and cov.count("missing") == 2


def test_ascsim_implements_the_hooks_of_the_unit_tests():
    by_module = {c.module: c for c in coverage()}
    assert by_module["asc.runtime.jit"].count("missing") == 0
    assert "Launcher" in by_module["asc.runtime.launcher"].names["implemented"]
    total = sum(c.total for c in by_module.values())
    assert total == sum(len(v) for v in reference_names().values())


def test_extract_names_follows_all_lists(tmp_path):
    pkg = tmp_path / "python" / "asc"
    files = {
        "__init__.py": '''
            from .language import __all__ as lan_all
            __all__ = ["jit"]
            __all__.extend(lan_all)
        ''',
        "language/__init__.py": '''
            from .basic import __all__ as basic_all
            __all__ = ["adv"]
            __all__.extend(basic_all)
            __all__ += ["extra"]
        ''',
        "language/basic/__init__.py": '__all__ = ["add", "sub"]',
        "language/adv/__init__.py": '__all__ = ["Matmul"]',
        "lib/host/__init__.py": '__all__ = ["MultiCoreMatmulTiling"]',
        "lib/runtime/__init__.py": '__all__ = ["current_stream"]',
        "runtime/config.py": '''
            from enum import Enum
            class Backend(Enum):
                Model = "Model"
            def set_platform(backend):
                pass
            _private = 1
            NAME = "x"
        ''',
        "runtime/jit.py": "class MockTensor:\n    pass\n",
        "runtime/launcher.py": "class Launcher:\n    pass\n",
        "runtime/compiler.py": "class Compiler:\n    pass\n",
    }
    for relative, text in files.items():
        path = pkg / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    names = extract_names(tmp_path)
    assert names["asc"] == ["jit", "adv", "add", "sub", "extra"]
    assert names["asc.adv"] == ["Matmul"]
    assert names["asc.runtime.config"] == ["Backend", "set_platform", "NAME"]
    assert names["asc.runtime.launcher"] == ["Launcher"]
    with pytest.raises(FileNotFoundError, match="compiler.py"):
        (pkg / "runtime" / "compiler.py").unlink()
        extract_names(tmp_path)


def test_dump_names_round_trips(tmp_path, monkeypatch):
    path = tmp_path / "names.yaml"
    path.write_text(api_coverage.dump_names({"asc": ["a", "b"]}, "origin@abc"))
    monkeypatch.setattr(api_coverage, "NAMES_FILE", path)
    api_coverage.reference_names.cache_clear()
    try:
        assert reference_names() == {"asc": ("a", "b")}
    finally:
        api_coverage.reference_names.cache_clear()


def test_info_api_prints_the_table(capsys):
    assert main(["info", "--api", "--list"]) == 0
    out = capsys.readouterr().out
    assert "asc.adv" in out and "total" in out and "implemented" in out
    assert "asc.lib.runtime" in out and "asc.runtime.compiler refuses" in out
