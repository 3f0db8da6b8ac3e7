from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from lyra.llm import (
    Completion,
    LLMConfig,
    LoggedProvider,
    LogRecord,
    Message,
    ReplayProvider,
    Usage,
    make_provider,
    read_log,
    usage_summary,
)
from lyra.llm.errors import (
    LLMConfigError,
    ReplayExhaustedError,
    ReplayMismatchError,
    SessionLogError,
)
from lyra.llm.openai_provider import OpenAIProvider
from lyra.llm.session import format_usage
from tests.chat_server import ChatServer, answer

from .conftest import MESSAGES

FOLLOW_UP = (*MESSAGES, Message("assistant", "stack()"), Message("user", "Use pick_place."))


class Scripted:
    """A provider that answers from a list, as a person at the terminal would."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)

    def complete(
        self, messages: Sequence[Message], *, purpose: str, task: str | None = None
    ) -> Completion:
        return Completion(
            text=self.answers.pop(0),
            model="helper-model",
            prompt_tokens=100,
            completion_tokens=10,
            latency_s=2.5,
            provider="manual",
            answered_by="helper-model",
            tokens_estimated=True,
        )


@pytest.fixture
def recording(tmp_path: Path) -> Path:
    log = tmp_path / "sessions" / "first.jsonl"
    recorder = LoggedProvider(Scripted("stack()", "pick_place(...)"), log)
    recorder.complete(MESSAGES, purpose="skill_learning", task="red-on-blue")
    recorder.complete(FOLLOW_UP, purpose="feedback", task="red-on-blue")
    return log


def test_log_records_every_call(recording: Path) -> None:
    first, second = read_log(recording)
    assert first == LogRecord(
        index=1,
        time=first.time,
        purpose="skill_learning",
        provider="manual",
        model="helper-model",
        answered_by="helper-model",
        messages=MESSAGES,
        answer="stack()",
        prompt_tokens=100,
        completion_tokens=10,
        tokens_estimated=True,
        latency_s=2.5,
        task="red-on-blue",
    )
    assert (second.index, second.purpose, second.messages, second.answer) == (
        2,
        "feedback",
        FOLLOW_UP,
        "pick_place(...)",
    )
    line = json.loads(recording.read_text(encoding="utf-8").splitlines()[0])
    assert list(line) == [
        "index",
        "time",
        "purpose",
        "provider",
        "model",
        "answered_by",
        "messages",
        "answer",
        "prompt_tokens",
        "completion_tokens",
        "tokens_estimated",
        "latency_s",
        "backend",
        "task",
    ]
    assert line["messages"][0] == {"role": "system", "content": "You write robot skills."}


def test_records_name_the_sessions_backend_and_old_logs_still_read(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    LoggedProvider(Scripted("go"), log, backend="ravens").complete(MESSAGES, purpose="plan")
    (record,) = read_log(log)
    assert record.backend == "ravens"
    # A log written before records named their backend reads with none.
    old = json.loads(log.read_text())
    del old["backend"]
    log.write_text(json.dumps(old) + "\n")
    assert read_log(log)[0].backend is None


def test_a_log_written_before_records_named_their_task_still_replays(recording: Path) -> None:
    old = []
    for line in recording.read_text().splitlines():
        data = json.loads(line)
        del data["task"]
        old.append(json.dumps(data))
    recording.write_text("\n".join(old) + "\n")
    assert [r.task for r in read_log(recording)] == [None, None]
    # Matched by order and purpose alone.
    replay = ReplayProvider(recording)
    assert replay.complete(MESSAGES, purpose="skill_learning", task="x").text == "stack()"
    assert replay.complete(FOLLOW_UP, purpose="feedback", task="y").text == "pick_place(...)"


def test_a_continued_log_keeps_counting(recording: Path) -> None:
    LoggedProvider(Scripted("more"), recording).complete(MESSAGES, purpose="plan")
    assert [r.index for r in read_log(recording)] == [1, 2, 3]


def test_replay_answers_in_order_then_runs_out(recording: Path) -> None:
    replay = make_provider(LLMConfig.from_spec(f"replay:{recording}"))
    first = replay.complete(MESSAGES, purpose="skill_learning", task="red-on-blue")
    second = replay.complete(FOLLOW_UP, purpose="feedback", task="red-on-blue")
    assert (first.text, first.provider, first.answered_by, first.prompt_tokens) == (
        "stack()",
        "replay",
        "helper-model",
        100,
    )
    assert second.text == "pick_place(...)"
    with pytest.raises(ReplayExhaustedError) as caught:
        replay.complete(MESSAGES, purpose="feedback", task="red-on-blue")
    assert str(caught.value) == (
        f"a feedback request for task red-on-blue goes past what {recording} recorded for task "
        "red-on-blue (2 requests in all): the run needs more rounds than the recorded one; "
        "record the session again with --llm openai or --llm manual"
    )


def test_a_prompt_asked_otherwise_is_answered_and_reported(recording: Path) -> None:
    replay = ReplayProvider(recording)
    replay.complete(MESSAGES, purpose="skill_learning", task="red-on-blue")
    assert replay.summary() == (
        f"replay of {recording}: 1 request answered, each asked as recorded"
    )
    changed = (*MESSAGES, Message("assistant", "stack()"), Message("user", "Use pick."))
    answer = replay.complete(changed, purpose="feedback", task="red-on-blue")
    assert answer.text == "pick_place(...)"
    assert replay.summary() == (
        f"replay of {recording}: 2 requests answered, 1 asked otherwise than recorded "
        "(recorded request 2)"
    )
    assert replay.differences_text() == (
        "=== recorded request 2 (feedback, task red-on-blue)\n"
        "--- recorded\n"
        "+++ requested\n"
        "@@ -15,3 +15,3 @@\n"
        " ## user\n"
        " \n"
        "-Use pick_place.\n"
        "+Use pick.\n"
    )


def test_replay_finds_a_tasks_requests_past_the_others(tmp_path: Path) -> None:
    """A resumed run starts at a later task; a task accepted sooner leaves requests unasked."""
    log = tmp_path / "three.jsonl"
    recorder = LoggedProvider(Scripted("a1", "a2", "b1", "c1"), log)
    for task in ("a", "a", "b", "c"):
        recorder.complete(MESSAGES, purpose="skill_learning", task=task)
    replay = ReplayProvider(log)
    assert replay.complete(MESSAGES, purpose="skill_learning", task="b").text == "b1"
    assert replay.complete(MESSAGES, purpose="skill_learning", task="c").text == "c1"
    assert replay.summary() == (
        f"replay of {log}: 2 requests answered, each asked as recorded; not asked: "
        "recorded requests 1, 2"
    )
    # Answered requests are not given twice: a's are behind the replay now.
    with pytest.raises(ReplayExhaustedError):
        replay.complete(MESSAGES, purpose="skill_learning", task="a")


def test_replay_checks_the_purpose(recording: Path) -> None:
    with pytest.raises(ReplayMismatchError) as caught:
        ReplayProvider(recording).complete(MESSAGES, purpose="plan", task="red-on-blue")
    assert str(caught.value) == (
        f"a plan request was asked where {recording} recorded request 1 of another kind: the "
        "run went another way than the recorded one (another verdict, or another number of "
        "rounds); record the session again (--llm openai or --llm manual):\n"
        "--- recorded\n+++ requested\n@@ -1,3 +1,3 @@\n-purpose: skill_learning\n"
        "+purpose: plan\n \n ## system"
    )


def test_record_from_a_server_and_replay_offline(chat_server: ChatServer, tmp_path: Path) -> None:
    chat_server.replies = [answer("stack()"), answer("pick_place(...)")]
    config = LLMConfig(base_url=chat_server.url, model="test-model")
    log = tmp_path / "live.jsonl"
    live = LoggedProvider(OpenAIProvider(config, api_key="sk-test"), log)
    recorded = [
        live.complete(MESSAGES, purpose="skill_learning"),
        live.complete(FOLLOW_UP, purpose="feedback"),
    ]
    replay = ReplayProvider(log)
    replayed = [
        replay.complete(MESSAGES, purpose="skill_learning"),
        replay.complete(FOLLOW_UP, purpose="feedback"),
    ]
    for before, after in zip(recorded, replayed, strict=True):
        assert (after.text, after.model, after.prompt_tokens, after.completion_tokens) == (
            before.text,
            "test-model",
            21,
            4,
        )
    assert [r.provider for r in read_log(log)] == ["openai", "openai"]


def test_replay_needs_a_recording() -> None:
    with pytest.raises(LLMConfigError) as caught:
        make_provider(LLMConfig(provider="replay"))
    assert str(caught.value) == (
        "replay needs a recorded session: use --llm replay:PATH with a session log "
        "(.lyra/sessions/*.jsonl), or set recording in the [llm] table of lyra.toml"
    )


def test_damaged_log_names_the_line(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    log.write_text('{"index": 1}\n', encoding="utf-8")
    with pytest.raises(SessionLogError) as caught:
        ReplayProvider(log)
    assert str(caught.value) == (
        f"{log}, line 1, is not a lyra session record (KeyError: 'messages'): point at a log "
        "written by lyra (.lyra/sessions/*.jsonl), or remove the damaged line"
    )


def test_usage_per_purpose(recording: Path) -> None:
    LoggedProvider(Scripted("again"), recording).complete(MESSAGES, purpose="skill_learning")
    summary = usage_summary(recording)
    assert summary == {
        "skill_learning": Usage(2, 200, 20, 5.0, True),
        "feedback": Usage(1, 100, 10, 2.5, True),
    }
    assert format_usage(summary) == (
        "purpose         calls  prompt_tokens  completion_tokens  latency_s\n"
        "skill_learning      2  ~         200  ~              20        5.0\n"
        "feedback            1  ~         100  ~              10        2.5\n"
        "total               3  ~         300  ~              30        7.5"
    )
