"""The advice that goes with the machine's findings, in pyasc's words (see ``Launch.hint``)."""

PYASC_HINTS = {
    "flag-set-twice": "pair every set_flag with one wait_flag before setting the same event id "
                      "again",
    "flag-wait-unset": "call set_flag(HardEvent.{src}_{dst}, {event_id}) on the {src} side first",
    "race-pipes": "set_flag(HardEvent.{first}_{second}) after the first and wait_flag before the "
                  "second (or pass the tensor through a TQue)",
    "race-cores": "give each core its own GM range, or use set_atomic_add",
    "race-cross-core": "cross_core_set_flag after the producer's copy-out and "
                       "cross_core_wait_flag before the consumer reads (or sync_all)",
    "gate-held": "deque and free_tensor every allocated tensor before the kernel returns",
    "cross-core-pending": "wait for the flag on the receiving core before setting it again",
}
