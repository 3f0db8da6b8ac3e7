"""Fixtures of the LLM tests: the conversation they send."""

from lyra.llm import Message

MESSAGES = (
    Message("system", "You write robot skills."),
    Message("user", "Stack the red block on the blue block."),
)
