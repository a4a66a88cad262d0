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
    "barrier-impossible": "launch at most as many blocks as the chip has cores (block_num <= "
                          "core count) when they meet at sync_all, and call sync_all with the "
                          "same used_cores on every core",
    "use-after-free": "alloc_tensor a new tensor for new data; do not touch a tensor after its "
                      "free_tensor",
    "view-superseded": "call TBuf.get again after init_buffer(buf=...) placed the TBuf again",
    "stale-read": "copy in (data_copy_pad for a tail) or compute every element the instruction "
                  "reads after alloc_tensor, or pass the count of valid elements",
    "placement-overlap": "place the static LocalTensor outside the bytes init_buffer carved "
                         "(after TPipe's buffers), or take it from a TBuf",
    "placement-outside": "give LocalTensor an address and tile_size that fit the buffer of its "
                         "TPosition",
    "flag-wrong-id": "wait_flag with the event id the matching set_flag raises (the "
                     "ping-pong index of this tile)",
    "cross-core-wrong-pipe": "cross_core_set_flag(..., PIPE_{pipe}) after the copy-out, so the "
                             "flag follows the write the other core reads",
    "cross-core-pending": "wait for the flag on the receiving core before setting it again",
}
