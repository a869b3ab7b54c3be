"""``ctxmodes serve``: a self-hostable backend for Codex's ``history`` and ``notes`` contract.

The service stands where the ChatGPT Codex backend stands for the Codex CLI and for the Remote
mode: it serves the model catalog and start-up endpoints, proxies ``/responses`` to any
ctxmodes model while recording each session's windows from that traffic, and answers the
``alpha/history/v2/*`` and ``alpha/notes/v2/*`` operations with encrypted outputs.

Modules:

* the operations: :mod:`.engine` (the ``history``/``notes`` operations, over the
  context-window kit's), :mod:`.responses_items` (history recorded from the Responses items a
  client sends), :mod:`.candidates` (checking a history search's candidates), :mod:`.limits`
  (searches taking turns within an account), :mod:`.workers` (the threads calls run on,
  shared fairly between accounts);
* the model side: :mod:`.bridge` (Responses wire ↔ ctxmodes providers), :mod:`.upstream`
  (an upstream stream carried to the event loop), :mod:`.reasoning` (the effort asked for,
  and the model's thinking carried between requests, sealed), :mod:`.catalog` (what the
  Codex CLI asks for before its first turn);
* accounts and keys: :mod:`.accounts` (bearer tokens), :mod:`.codex_home` (a Codex CLI
  home signed in with one), :mod:`.crypto` (per-account keys, the values a client carries),
  :mod:`.sealing` (what the database holds: sealed values and a blind index);
* storage: :mod:`.storage` (the interface), :mod:`.sealed_storage` (encryption at rest over
  it), :mod:`.sqlite_storage` and :mod:`.postgres_storage` (the two databases),
  :mod:`.batches` (calls to Postgres that share a statement);
* HTTP and the process: :mod:`.app` (the routes), :mod:`.bodies` (request bodies with bounded
  memory), :mod:`.logs`, :mod:`.metrics`, :mod:`.server` (start and shutdown), :mod:`.cli`
  (the ``ctxmodes serve`` command, with its help defaults in :mod:`.defaults`), and
  :mod:`.loadgen` (a bounded load run against running services).

The ``serve`` and ``postgres`` extras are imported at module level only by :mod:`.app`,
:mod:`.bodies`, :mod:`.logs`, :mod:`.metrics`, :mod:`.server`, :mod:`.loadgen` and
:mod:`.postgres_storage`; every other module, :mod:`.cli` included (its handlers import the
rest when they run), loads without them.
"""
