"""The Remote mode: Codex's native, encrypted ``history`` and ``notes`` namespaces, served by a
Codex history/notes backend (the ChatGPT service or ``ctxmodes serve``)."""
