"""What the OpenAI-shaped formats share: the SDK's request errors and event reading
(:mod:`.sdk`), and the Responses request and stream (:mod:`.responses_request`,
:mod:`.responses_stream`) that the OpenAI, Codex and Azure endpoints speak."""
