"""``ctxmodes serve``: a self-hostable backend for Codex's ``history`` and ``notes`` contract.

The service stands where the ChatGPT Codex backend stands for the Codex CLI and for the Remote
mode: it serves the model catalog and start-up endpoints, proxies ``/responses`` to any
ctxmodes model while recording each session's windows from that traffic, and answers the
``alpha/history/v2/*`` and ``alpha/notes/v2/*`` operations with encrypted outputs.

Modules: :mod:`.crypto` (per-account keys), :mod:`.storage` (the storage interface and its
SQLite implementation), :mod:`.accounts` (bearer tokens), :mod:`.engine` (the operations),
:mod:`.ingest` (history from Responses items), :mod:`.bridge` (Responses wire ↔ ctxmodes
providers), :mod:`.catalog` (what the Codex CLI needs to start), :mod:`.app` (HTTP),
:mod:`.cli` (the ``ctxmodes serve`` command). Only :mod:`.app` and :mod:`.cli`'s handlers
import the HTTP stack, so the rest loads without the ``serve`` extra.
"""
