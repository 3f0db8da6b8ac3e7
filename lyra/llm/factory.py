"""Build the configured provider; the ``openai`` client is imported only when it is used."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from lyra.llm.base import Provider
from lyra.llm.config import LLMConfig
from lyra.llm.errors import LLMConfigError
from lyra.llm.manual import ManualProvider
from lyra.llm.replay import ReplayProvider
from lyra.llm.session import LoggedProvider, session_log_path
from lyra.workspace import Workspace


def make_provider(config: LLMConfig, *, environ: Mapping[str, str] | None = None) -> Provider:
    """Return the provider ``config`` names, unlogged.

    Args:
        config: the settings.
        environ: where the API key is read (default: ``os.environ``).

    Raises:
        LLMConfigError: replay was chosen without a recording.
        MissingAPIKeyError: openai was chosen, the key is missing and the server is remote.
        SessionLogError: the recording is not a session log.
    """
    if config.provider == "manual":
        return ManualProvider(
            answers=config.answers, answered_by=config.answered_by, timeout=config.answer_timeout
        )
    if config.provider == "replay":
        if config.recording is None:
            raise LLMConfigError(
                "replay needs a recorded session: use --llm replay:PATH with a session log "
                "(.lyra/sessions/*.jsonl), or set recording in the [llm] table of lyra.toml"
            )
        return ReplayProvider(config.recording)
    from lyra.llm.openai_provider import OpenAIProvider

    env = os.environ if environ is None else environ
    return OpenAIProvider(config, api_key=env.get(config.api_key_env))


def open_session(
    workspace: Workspace,
    spec: str | None = None,
    *,
    log: Path | None = None,
    backend: str | None = None,
) -> LoggedProvider:
    """The provider a command uses: the workspace's settings, ``--llm`` on top, every call logged.

    Args:
        workspace: whose ``lyra.toml`` is read and where the log goes by default.
        spec: the ``--llm`` option, if given.
        log: the session log (default: a new ``.lyra/sessions/<UTC time>.jsonl``).
        backend: the backend the session works on; each record names it.
    """
    provider = make_provider(LLMConfig.load(workspace.root, spec=spec))
    return LoggedProvider(provider, log or session_log_path(workspace), backend)
