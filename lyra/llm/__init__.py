"""LLM providers behind one small interface: ``openai``, ``manual`` and ``replay``.

Entry points: :class:`LLMConfig` (``load``, ``from_spec``), :func:`make_provider`,
:func:`open_session` (settings plus a session log, what commands use), and the session log in
:mod:`lyra.llm.session`. Importing this package does not import the ``openai`` client.
"""

from lyra.llm.base import Completion, Image, Message, Provider
from lyra.llm.config import LLMConfig
from lyra.llm.factory import make_provider, open_session
from lyra.llm.manual import ManualProvider
from lyra.llm.replay import ReplayProvider
from lyra.llm.session import LoggedProvider, LogRecord, Usage, read_log, usage_summary

__all__ = [
    "Completion",
    "Image",
    "LLMConfig",
    "LogRecord",
    "LoggedProvider",
    "ManualProvider",
    "Message",
    "Provider",
    "ReplayProvider",
    "Usage",
    "make_provider",
    "open_session",
    "read_log",
    "usage_summary",
]
