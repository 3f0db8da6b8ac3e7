from __future__ import annotations

import socket
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from lyra.llm import Completion, LLMConfig, make_provider
from lyra.llm.errors import (
    EmptyAnswerError,
    LLMRequestError,
    LLMRetriesExhaustedError,
    LLMUnreachableError,
    MissingAPIKeyError,
    UnknownModelError,
)
from lyra.llm.openai_provider import OpenAIProvider, is_loopback, retry_after
from tests.chat_server import ChatServer, answer, failure

from .conftest import MESSAGES

WHERE = "--llm, the LYRA_LLM* environment variables or the [llm] table of lyra.toml"


def provider(url: str, sleeps: list[float], retries: int = 2) -> OpenAIProvider:
    config = LLMConfig(model="test-model", base_url=url, max_retries=retries, timeout=5)
    return OpenAIProvider(config, api_key="sk-test", sleep=sleeps.append)


def test_answer_and_usage(chat_server: ChatServer) -> None:
    chat_server.replies = [answer("def stack(): ...")]
    result = provider(chat_server.url, []).complete(MESSAGES, purpose="skill_learning")
    assert result == Completion(
        text="def stack(): ...",
        model="test-model",
        prompt_tokens=21,
        completion_tokens=4,
        latency_s=result.latency_s,
        provider="openai",
        answered_by="test-model",
        tokens_estimated=False,
    )
    assert 0 < result.latency_s < 5
    [request] = chat_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.authorization == "Bearer sk-test"
    assert request.body["model"] == "test-model"
    assert request.body["temperature"] == 0.0
    assert request.body["messages"] == [
        {"role": "system", "content": "You write robot skills."},
        {"role": "user", "content": "Stack the red block on the blue block."},
    ]


def test_missing_usage_is_estimated(chat_server: ChatServer) -> None:
    chat_server.replies = [answer("12345678", usage=False)]
    result = provider(chat_server.url, []).complete(MESSAGES, purpose="plan")
    # 23 + 38 characters of messages, 8 of answer, one token per four characters.
    assert (result.prompt_tokens, result.completion_tokens, result.tokens_estimated) == (
        6 + 10,
        2,
        True,
    )


def test_rate_limit_waits_as_asked_then_succeeds(chat_server: ChatServer) -> None:
    chat_server.replies = [failure(429, "slow down", retry_after="7"), answer("ok")]
    sleeps: list[float] = []
    result = provider(chat_server.url, sleeps).complete(MESSAGES, purpose="plan")
    assert result.text == "ok"
    assert sleeps == [7.0]
    assert len(chat_server.requests) == 2


def test_server_errors_back_off_then_give_up(chat_server: ChatServer) -> None:
    chat_server.replies = [failure(500, "overloaded"), failure(503, "busy"), failure(500, "down")]
    sleeps: list[float] = []
    with pytest.raises(LLMRetriesExhaustedError) as caught:
        provider(chat_server.url, sleeps).complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        f"the LLM server at {chat_server.url} failed 3 attempts, the last with HTTP 500: down: "
        f"wait and run again, raise max_retries, or pick another server with {WHERE}"
    )
    assert sleeps == [1.0, 2.0]


def test_unknown_model(chat_server: ChatServer) -> None:
    chat_server.replies = [
        failure(404, "The model `test-model` does not exist", code="model_not_found")
    ]
    sleeps: list[float] = []
    with pytest.raises(UnknownModelError) as caught:
        provider(chat_server.url, sleeps).complete(MESSAGES, purpose="plan")
    url = chat_server.url
    assert str(caught.value) == (
        f"the LLM server at {url} does not serve the model 'test-model' "
        "(The model `test-model` does not exist): pick one it serves "
        f"(GET {url}/models lists them) and set it with --llm openai:MODEL, LYRA_LLM_MODEL "
        "or model in the [llm] table of lyra.toml"
    )
    assert sleeps == []


def test_wrong_path_is_not_an_unknown_model(chat_server: ChatServer) -> None:
    chat_server.replies = [failure(404, "Not Found")]
    with pytest.raises(LLMRequestError) as caught:
        provider(chat_server.url, []).complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        f"the LLM server at {chat_server.url} refused the request (HTTP 404: Not Found): "
        "check base_url: OpenAI-compatible servers usually serve under /v1"
    )


def test_rejected_key_is_not_retried(chat_server: ChatServer) -> None:
    chat_server.replies = [failure(401, "Incorrect API key provided")]
    sleeps: list[float] = []
    with pytest.raises(LLMRequestError) as caught:
        provider(chat_server.url, sleeps).complete(MESSAGES, purpose="plan")
    assert str(caught.value).endswith(
        "(HTTP 401: Incorrect API key provided): set a valid key in OPENAI_API_KEY"
    )
    assert (caught.value.status, sleeps) == (401, [])


def test_empty_answer(chat_server: ChatServer) -> None:
    chat_server.replies = [answer("  \n")]
    with pytest.raises(EmptyAnswerError) as caught:
        provider(chat_server.url, []).complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        f"the model test-model at {chat_server.url} gave an empty answer to the plan request: "
        "ask again, or answer it yourself with --llm manual"
    )


def test_unreachable_server_is_named() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The socket is closed: nothing listens on the port any more.
    url = f"http://127.0.0.1:{port}/v1"
    sleeps: list[float] = []
    with pytest.raises(LLMUnreachableError) as caught:
        provider(url, sleeps, retries=1).complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        f"cannot reach the LLM server at {url} after 2 attempts "
        "([Errno 111] Connection refused): start the server, or fix base_url with "
        "LYRA_LLM_BASE_URL or the [llm] table of lyra.toml"
    )
    assert sleeps == [1.0]


def test_missing_key_names_the_variable() -> None:
    config = LLMConfig(api_key_env="MY_LLM_KEY")
    with pytest.raises(MissingAPIKeyError) as caught:
        make_provider(config, environ={})
    assert str(caught.value) == (
        "no API key for the LLM server at https://api.openai.com/v1: set MY_LLM_KEY, "
        "name another variable with api_key_env in the [llm] table of lyra.toml, "
        "or use --llm manual to answer the prompts yourself"
    )


def test_local_server_needs_no_key(chat_server: ChatServer) -> None:
    chat_server.replies = [answer("ok")]
    local = make_provider(LLMConfig(base_url=chat_server.url), environ={})
    assert local.complete(MESSAGES, purpose="plan").text == "ok"
    assert chat_server.requests[0].authorization == "Bearer no-key"


def test_key_is_read_from_the_configured_variable(chat_server: ChatServer) -> None:
    chat_server.replies = [answer("ok")]
    config = LLMConfig(base_url=chat_server.url, api_key_env="MY_LLM_KEY")
    make_provider(config, environ={"MY_LLM_KEY": "sk-mine"}).complete(MESSAGES, purpose="plan")
    assert chat_server.requests[0].authorization == "Bearer sk-mine"


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:11434/v1", True),
        ("http://127.0.0.1:8000/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
    ],
)
def test_loopback(url: str, local: bool) -> None:
    assert is_loopback(url) is local


def test_retry_after_forms() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    later = format_datetime(datetime(2025, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert retry_after({"retry-after": "2.5"}) == 2.5
    assert retry_after({"retry-after": later}, now=now.timestamp()) == 30.0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None
