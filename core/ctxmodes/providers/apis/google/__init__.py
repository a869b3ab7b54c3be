"""What the two Gemini formats share (pi-ai's ``google-shared``): the request
(:mod:`.request`), the stream (:mod:`.stream`) and one call over ``@google/genai``'s wire
(:mod:`.call`). The formats differ in endpoint, credentials and a few thinking defaults."""
