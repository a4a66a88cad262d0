"""``asc.language.fwk``: pyasc's package of the framework classes (pipes, queues, buffers)."""

from ascsim.asc.fwk import TBuf, TBufPool, TPipe, TQue, TQueBind, get_tpipe_ptr

__all__ = ["TBuf", "TBufPool", "TPipe", "TQue", "TQueBind", "get_tpipe_ptr"]
