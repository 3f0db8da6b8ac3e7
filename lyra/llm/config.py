"""LLM settings: defaults, then ``[llm]`` in ``lyra.toml``, then environment, then ``--llm``."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from lyra.llm.errors import LLMConfigError

ProviderKind = Literal["openai", "manual", "replay"]
PROVIDERS: tuple[ProviderKind, ...] = ("openai", "manual", "replay")
SPEC_FORMS = "openai, openai:MODEL, manual, manual:DIR, replay or replay:PATH"

# Environment variables that override single settings; LYRA_LLM takes a whole --llm spec.
ENV_SETTINGS = {
    "LYRA_LLM_MODEL": "model",
    "LYRA_LLM_BASE_URL": "base_url",
    "LYRA_LLM_ANSWERED_BY": "answered_by",
}


@dataclass(frozen=True)
class LLMConfig:
    """Which model answers, and how to reach it.

    Attributes:
        provider: ``openai`` (any OpenAI-compatible endpoint), ``manual`` (a person or agent
            answers each prompt) or ``replay`` (answers from a recorded session log).
        model: the model name sent to the endpoint.
        base_url: the endpoint, e.g. ``http://localhost:11434/v1``; None means OpenAI's.
        api_key_env: the environment variable holding the API key.
        timeout: seconds to wait for one HTTP answer.
        max_retries: how often a 429, a 5xx or a lost connection is retried.
        temperature: the sampling temperature.
        answers: manual only: the folder for prompt and answer files; None means the terminal.
        answer_timeout: manual only: seconds to wait for an answer file.
        recording: replay only: the session log to answer from.
        answered_by: manual only: who answers, as written to the session log.
    """

    provider: ProviderKind = "openai"
    model: str = "gpt-4o"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 120.0
    max_retries: int = 4
    temperature: float = 0.0
    answers: Path | None = None
    answer_timeout: float = 3600.0
    recording: Path | None = None
    answered_by: str = "person"

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise LLMConfigError(
                f"unknown LLM provider '{self.provider}': use one of {', '.join(PROVIDERS)}"
            )
        if self.max_retries < 0 or self.timeout <= 0 or self.answer_timeout <= 0:
            raise LLMConfigError(
                "max_retries must be 0 or more, timeout and answer_timeout more than 0: "
                "fix them in the [llm] table of lyra.toml"
            )

    @classmethod
    def load(
        cls,
        root: Path,
        *,
        spec: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> LLMConfig:
        """Return the settings for the workspace at ``root``.

        Args:
            root: the workspace folder; its ``lyra.toml`` is read when present.
            spec: the ``--llm`` option, which overrides everything else.
            environ: the environment to read (default: ``os.environ``).

        Raises:
            LLMConfigError: a setting is malformed.
        """
        env = os.environ if environ is None else environ
        config = cls.from_toml(root / "lyra.toml")
        overrides: dict[str, Any] = {
            field: env[name] for name, field in ENV_SETTINGS.items() if env.get(name)
        }
        config = dataclasses.replace(config, **overrides)
        if env.get("LYRA_LLM"):
            config = cls.from_spec(env["LYRA_LLM"], config)
        return cls.from_spec(spec, config) if spec else config

    @classmethod
    def from_toml(cls, path: Path) -> LLMConfig:
        """Read the ``[llm]`` table of ``path``; defaults when the file or table is absent.

        Relative paths in the table are taken relative to the file's folder.
        """
        if not path.is_file():
            return cls()
        try:
            table = tomllib.loads(path.read_text(encoding="utf-8")).get("llm", {})
        except tomllib.TOMLDecodeError as error:
            raise LLMConfigError(f"{path} is not valid TOML ({error}): fix the file") from None
        if not isinstance(table, dict):
            raise LLMConfigError(f"{path}: llm must be a table ([llm]), not a single value")
        return cls(**{key: _toml_value(path, key, value) for key, value in table.items()})

    @classmethod
    def from_spec(cls, spec: str, base: LLMConfig | None = None) -> LLMConfig:
        """Apply a ``--llm`` spec to ``base`` (default: the defaults).

        A spec sets only what it names: ``openai`` keeps the configured model, ``manual`` keeps
        the configured answers folder. Relative paths are taken from the current folder.

        Args:
            spec: ``openai``, ``openai:MODEL``, ``manual``, ``manual:DIR``, ``replay`` or
                ``replay:PATH``. Only the first colon separates, so ``openai:llama3:8b`` works.
            base: the settings to start from.

        Raises:
            LLMConfigError: the spec has none of these forms.
        """
        kind, colon, value = spec.partition(":")
        if kind not in PROVIDERS or (colon and not value):
            raise LLMConfigError(f"unknown --llm '{spec}': use {SPEC_FORMS}")
        config = dataclasses.replace(base or cls(), provider=cast(ProviderKind, kind))
        if not value:
            return config
        if kind == "openai":
            return dataclasses.replace(config, model=value)
        path = Path(value).absolute()
        if kind == "manual":
            return dataclasses.replace(config, answers=path)
        return dataclasses.replace(config, recording=path)


# The type each [llm] key must have in lyra.toml; Path means a string taken as a path.
_TOML_TYPES: dict[str, type] = {
    "provider": str,
    "model": str,
    "base_url": str,
    "api_key_env": str,
    "timeout": float,
    "max_retries": int,
    "temperature": float,
    "answers": Path,
    "answer_timeout": float,
    "recording": Path,
    "answered_by": str,
}


def _toml_value(path: Path, key: str, value: Any) -> Any:
    expected = _TOML_TYPES.get(key)
    if expected is None:
        raise LLMConfigError(
            f"{path}: unknown key '{key}' in [llm]; known keys: {', '.join(_TOML_TYPES)}"
        )
    # bool is an int to Python, but `max_retries = true` is a mistake, not a count.
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if expected is float and numeric:
        return float(value)
    if expected is int and numeric and isinstance(value, int):
        return value
    if expected in (str, Path) and isinstance(value, str):
        return path.parent / value if expected is Path else value
    kind = {str: "a string", float: "a number", int: "an integer", Path: "a path string"}
    raise LLMConfigError(f"{path}: [llm] {key} must be {kind[expected]}, not {value!r}")
