"""The advice that goes with the machine's findings, in PyPTO Pro's words."""

PTO_HINTS = {
    "race-pipes": "order the {first} write and the {second} access: give the tile a "
                  "buffer id (make_tile_group(mutex_ids=...) with auto_mutex), or "
                  "pl.system.sync_src/sync_dst from {first} to {second}",
    "race-cores": "give each core its own GM range (offsets from pl.get_block_idx()), or "
                  "store with atomic=pl.AtomicType.AtomicAdd",
    "race-cross-core": "pl.system.set_cross_core on the producer's pipe after its store, and "
                       "wait_cross_core before the consumer's load",
    "flag-set-twice": "sync_dst the event once before sync_src raises the same event_id again",
    "flag-wait-unset": "pl.system.sync_src(set_pipe={src}, wait_pipe={dst}, event_id="
                       "{event_id}) before the matching sync_dst",
    "cross-core-pending": "wait_cross_core on the receiving core before setting the flag again",
    "deadlock": "every wait_cross_core needs a matching set_cross_core on another running core",
    "stale-read": "load or compute every element a tile op reads (set_validshape narrows the "
                  "window; fillpad fills the rest)",
    "placement-outside": "place the tile inside the memory (addr + size <= capacity)",
    "mutex-relock": "a pipe must unlock a buffer id before locking it again (auto_mutex pairs "
                    "them per op)",
    "mutex-unlock": "pl.system.mutex_unlock on the pipe that locked the buffer id",
}
