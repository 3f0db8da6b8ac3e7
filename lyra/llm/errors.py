"""Errors of the LLM providers; each message says what to do next."""

from __future__ import annotations

from pathlib import Path

from lyra.errors import LyraError

# Where a person changes the LLM settings, quoted by every hint that points there.
_CONFIG_PLACES = "--llm, the LYRA_LLM* environment variables or the [llm] table of lyra.toml"


def _attempts(count: int) -> str:
    return f"{count} attempt" if count == 1 else f"{count} attempts"


class LLMError(LyraError):
    """Base of every error an LLM provider, its configuration or its session log raises."""


class LLMConfigError(LLMError):
    """The LLM settings (lyra.toml, environment, --llm) are malformed or incomplete."""


class MissingAPIKeyError(LLMError):
    """The endpoint needs an API key and the configured environment variable is empty."""

    def __init__(self, env_var: str, url: str) -> None:
        self.env_var = env_var
        self.url = url
        super().__init__(
            f"no API key for the LLM server at {url}: set {env_var}, name another variable "
            "with api_key_env in the [llm] table of lyra.toml, or use --llm manual to answer "
            "the prompts yourself"
        )


class UnknownModelError(LLMError):
    """The server does not serve the configured model."""

    def __init__(self, model: str, url: str, detail: str) -> None:
        self.model = model
        self.url = url
        super().__init__(
            f"the LLM server at {url} does not serve the model '{model}' ({detail}): "
            f"pick one it serves (GET {url}/models lists them) and set it with "
            f"--llm openai:MODEL, LYRA_LLM_MODEL or model in the [llm] table of lyra.toml"
        )


class LLMUnreachableError(LLMError):
    """No connection to the server could be made, or it never answered in time."""

    def __init__(self, url: str, attempts: int, cause: str) -> None:
        self.url = url
        self.attempts = attempts
        super().__init__(
            f"cannot reach the LLM server at {url} after {_attempts(attempts)} ({cause}): "
            "start the server, or fix base_url with LYRA_LLM_BASE_URL or the [llm] table "
            "of lyra.toml"
        )


class LLMRetriesExhaustedError(LLMError):
    """The server kept answering with a transient error (429 or 5xx) until retries ran out."""

    def __init__(self, url: str, attempts: int, last: str) -> None:
        self.url = url
        self.attempts = attempts
        super().__init__(
            f"the LLM server at {url} failed {_attempts(attempts)}, the last with {last}: "
            f"wait and run again, raise max_retries, or pick another server with {_CONFIG_PLACES}"
        )


class LLMRequestError(LLMError):
    """The server refused the request for a reason that retrying does not fix."""

    def __init__(self, url: str, status: int, detail: str, hint: str) -> None:
        self.url = url
        self.status = status
        super().__init__(
            f"the LLM server at {url} refused the request (HTTP {status}: {detail}): {hint}"
        )


class EmptyAnswerError(LLMError):
    """The model answered without any text."""

    def __init__(self, source: str, purpose: str) -> None:
        self.source = source
        self.purpose = purpose
        super().__init__(
            f"{source} gave an empty answer to the {purpose} request: ask again, or answer "
            "it yourself with --llm manual"
        )


class ManualAnswerTimeoutError(LLMError):
    """Nobody wrote the answer file of a manual request in time."""

    def __init__(self, answer: Path, prompt: Path, timeout: float) -> None:
        self.answer = answer
        self.prompt = prompt
        super().__init__(
            f"no answer appeared in {answer} within {timeout:g} s: write the answer to the "
            f"prompt in {prompt} there and run again, or raise answer_timeout in the [llm] "
            "table of lyra.toml"
        )


class AnswerFileError(LLMError):
    """A manual answer file that is not text."""

    def __init__(self, answer: Path, error: UnicodeDecodeError) -> None:
        self.answer = answer
        super().__init__(
            f"the answer file {answer} is not UTF-8 text (byte {error.object[error.start]:#04x} "
            f"at offset {error.start}): save the answer as plain UTF-8 text there and run "
            "again (the run resumes where it stopped)"
        )


class ReplayMismatchError(LLMError):
    """The recording's next request for a task is of another kind than the one asked."""

    def __init__(self, recording: Path, index: int, purpose: str, diff: str) -> None:
        self.recording = recording
        self.index = index
        self.purpose = purpose
        self.diff = diff
        super().__init__(
            f"a {purpose} request was asked where {recording} recorded request {index} of "
            "another kind: the run went another way than the recorded one (another verdict, "
            "or another number of rounds); record the session again (--llm openai or "
            f"--llm manual):\n{diff}"
        )


class ReplayExhaustedError(LLMError):
    """The recording holds no further request for the task that asks."""

    def __init__(self, recording: Path, recorded: int, purpose: str, task: str | None) -> None:
        self.recording = recording
        self.recorded = recorded
        self.purpose = purpose
        self.task = task
        whose = f" for task {task}" if task is not None else ""
        super().__init__(
            f"a {purpose} request{whose} goes past what {recording} recorded{whose} "
            f"({recorded} requests in all): the run needs more rounds than the recorded one; "
            "record the session again with --llm openai or --llm manual"
        )


class SessionLogError(LLMError):
    """A session log line cannot be read back."""

    def __init__(self, path: Path, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        super().__init__(
            f"{path}, line {line}, is not a lyra session record ({reason}): "
            "point at a log written by lyra (.lyra/sessions/*.jsonl), or remove the damaged line"
        )
