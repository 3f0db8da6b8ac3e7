"""The ``openai`` provider: any OpenAI-compatible chat-completions endpoint.

OpenAI, Azure's OpenAI-compatible endpoint, vLLM, Ollama and the llama.cpp server all speak it.
Retries are lyra's own (the client's are switched off) so that every wait can honour
``Retry-After``, be seen in tests through an injected ``sleep``, and end in an error that says
what happened.
"""

from __future__ import annotations

import base64
import ipaddress
import time
from collections.abc import Callable, Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import cast
from urllib.parse import urlsplit

import openai
from openai.types.chat import ChatCompletionMessageParam

from lyra.llm.base import Completion, Message, estimate_tokens
from lyra.llm.config import LLMConfig
from lyra.llm.errors import (
    EmptyAnswerError,
    LLMRequestError,
    LLMRetriesExhaustedError,
    LLMUnreachableError,
    MissingAPIKeyError,
    UnknownModelError,
)

DEFAULT_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the client refuses to start without one.
KEYLESS_PLACEHOLDER = "no-key"


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine (a local vLLM, Ollama or llama.cpp server)."""
    return loopback_host(urlsplit(url).hostname or "")


def loopback_host(host: str) -> bool:
    """Whether ``host`` (a name or an address) is one only this machine reaches."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked to wait, from ``Retry-After`` (seconds or an HTTP date)."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class OpenAIProvider:
    """Answers through the chat-completions API of an OpenAI-compatible server."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        api_key: str | None,
        sleep: Callable[[float], None] = time.sleep,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
    ) -> None:
        """Create the client; nothing is sent until :meth:`complete`.

        Args:
            config: model, endpoint, timeout, retries and temperature.
            api_key: the key, or None when the environment has none.
            sleep: waits between retries (tests pass a recorder).
            backoff: the first wait without ``Retry-After``; it doubles on each retry.
            max_backoff: the longest wait without ``Retry-After``.

        Raises:
            MissingAPIKeyError: no key, and the endpoint is not on this machine.
        """
        self.url = (config.base_url or DEFAULT_URL).rstrip("/")
        if not api_key:
            if not (config.base_url and is_loopback(config.base_url)):
                raise MissingAPIKeyError(config.api_key_env, self.url)
            api_key = KEYLESS_PLACEHOLDER
        self.config = config
        self.sleep = sleep
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.client = openai.OpenAI(
            base_url=self.url, api_key=api_key, timeout=config.timeout, max_retries=0
        )

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        """Send ``messages``; retry 429, 5xx and lost connections with exponential backoff.

        Raises:
            UnknownModelError: the server does not serve the configured model.
            LLMRequestError: the server refused the request for another lasting reason.
            LLMRetriesExhaustedError: 429 or 5xx on every attempt.
            LLMUnreachableError: no connection on every attempt.
            EmptyAnswerError: the answer holds no text.
        """
        started = time.perf_counter()
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            try:
                response = self.client.chat.completions.create(
                    model=self.config.model,
                    messages=[_param(m) for m in messages],
                    temperature=self.config.temperature,
                )
                break
            except (openai.RateLimitError, openai.InternalServerError) as error:
                if attempt + 1 == attempts:
                    raise LLMRetriesExhaustedError(
                        self.url, attempts, f"HTTP {error.status_code}: {_detail(error)}"
                    ) from error
                self.sleep(self._delay(attempt, retry_after(error.response.headers)))
            except openai.APIConnectionError as error:
                if attempt + 1 == attempts:
                    raise LLMUnreachableError(self.url, attempts, self._cause(error)) from error
                self.sleep(self._delay(attempt, None))
            except openai.APIStatusError as error:
                raise self._refusal(error) from error
        text = response.choices[0].message.content if response.choices else None
        if not text or not text.strip():
            raise EmptyAnswerError(f"the model {self.config.model} at {self.url}", purpose)
        usage = response.usage
        return Completion(
            text=text,
            model=response.model or self.config.model,
            prompt_tokens=usage.prompt_tokens
            if usage
            else sum(estimate_tokens(m.content) for m in messages),
            completion_tokens=usage.completion_tokens if usage else estimate_tokens(text),
            latency_s=time.perf_counter() - started,
            provider="openai",
            answered_by=response.model or self.config.model,
            # Some local servers send no usage block; then the counts are ours.
            tokens_estimated=usage is None,
        )

    def _delay(self, attempt: int, asked: float | None) -> float:
        if asked is not None:
            return asked
        return min(self.backoff * 2**attempt, self.max_backoff)

    def _cause(self, error: openai.APIConnectionError) -> str:
        if isinstance(error, openai.APITimeoutError):
            return f"no answer within {self.config.timeout:g} s"
        return str(error.__cause__ or error)

    def _refusal(self, error: openai.APIStatusError) -> Exception:
        detail = _detail(error)
        status = error.status_code
        if status == 404 and (error.code == "model_not_found" or "model" in detail.lower()):
            return UnknownModelError(self.config.model, self.url, detail)
        hints = {
            401: f"set a valid key in {self.config.api_key_env}",
            403: f"the key in {self.config.api_key_env} may not use this model or endpoint",
            404: "check base_url: OpenAI-compatible servers usually serve under /v1",
        }
        hint = hints.get(status, "check model and temperature in the [llm] table of lyra.toml")
        return LLMRequestError(self.url, status, detail, hint)


def _param(message: Message) -> ChatCompletionMessageParam:
    # The client types each role's dict separately; every role here takes plain text.
    if not message.images:
        return cast(ChatCompletionMessageParam, {"role": message.role, "content": message.content})
    # Pictures go as parts after the text, as data URLs: the chat format's image_url part.
    parts: list[dict[str, object]] = [{"type": "text", "text": message.content}]
    parts += [
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(image.png).decode()},
        }
        for image in message.images
    ]
    return cast(ChatCompletionMessageParam, {"role": message.role, "content": parts})


def _detail(error: openai.APIStatusError) -> str:
    """The server's own words: the ``message`` of its error body, else the raw body."""
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return error.response.text.strip()[:200] or error.response.reason_phrase
