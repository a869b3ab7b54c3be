"""What every wire format shares: a call's lifecycle (:mod:`.call`), the output cap
(:mod:`.budget`), retries (:mod:`.retry`), server-sent events (:mod:`.sse`), the history
repairs made before conversion (:mod:`.history`), option defaults (:mod:`.options`), and
cost (:mod:`.usage`)."""
