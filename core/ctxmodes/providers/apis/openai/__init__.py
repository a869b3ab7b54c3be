"""What the OpenAI-shaped wire formats share: the SDK's errors and event reading, the
Responses request and stream, strict tool schemas."""
