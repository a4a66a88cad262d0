"""``asc.language.core.struct``: structs declared with ``Field`` / ``StructField`` members."""

from ascsim.asc.struct import Field, Struct, StructField

__all__ = ["Field", "Struct", "StructField"]
