"""``pypto_pro``: the top-level package (data types)."""

from ascsim.pto.dtypes import TYPES, DataType

for _name, _type in TYPES.items():
    globals()[f"DT_{_name}"] = _type

__all__ = ["DataType", *(f"DT_{name}" for name in TYPES)]
