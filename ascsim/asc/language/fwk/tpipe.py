"""``asc.language.fwk.tpipe``: where pyasc defines the framework classes."""

from ascsim.asc.fwk import TBuf, TBufPool, TPipe, TQue, TQueBind, get_tpipe_ptr

__all__ = ["TBuf", "TBufPool", "TPipe", "TQue", "TQueBind", "get_tpipe_ptr"]
