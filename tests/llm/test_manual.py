from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest

from lyra.llm import Completion, LLMConfig, ManualProvider, make_provider
from lyra.llm.base import render_prompt
from lyra.llm.errors import EmptyAnswerError, ManualAnswerTimeoutError

from .conftest import MESSAGES

PROMPT = (
    "## system\n\nYou write robot skills.\n\n## user\n\nStack the red block on the blue block.\n"
)


def write_when_asked(prompt: Path, answer: Path, text: str) -> threading.Thread:
    """Act as the agent: wait for the prompt file, then write the answer file."""

    def agent() -> None:
        deadline = time.monotonic() + 5
        while not prompt.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        answer.write_text(text, encoding="utf-8")

    thread = threading.Thread(target=agent)
    thread.start()
    return thread


def test_render_prompt() -> None:
    assert render_prompt(MESSAGES) == PROMPT


def test_answer_through_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "answers"
    provider = ManualProvider(answers=folder, answered_by="helper-model", timeout=5, poll=0.01)
    agent = write_when_asked(
        folder / "0001-skill_learning.prompt.md",
        folder / "0001-skill_learning.answer.md",
        "def stack():\n    pass\n",
    )
    result = provider.complete(MESSAGES, purpose="skill_learning")
    agent.join()
    assert result == Completion(
        text="def stack():\n    pass",
        model="helper-model",
        prompt_tokens=(len(PROMPT) + 3) // 4,
        completion_tokens=6,  # 21 characters
        latency_s=result.latency_s,
        provider="manual",
        answered_by="helper-model",
        tokens_estimated=True,
    )
    assert (folder / "0001-skill_learning.prompt.md").read_text(encoding="utf-8") == PROMPT
    assert capsys.readouterr().err == (
        f"lyra: the prompt is in {folder}/0001-skill_learning.prompt.md; write the answer to "
        f"{folder}/0001-skill_learning.answer.md (waiting up to 5 s)\n"
    )


def test_numbering_continues_after_earlier_prompts(tmp_path: Path) -> None:
    (tmp_path / "0007-plan.prompt.md").write_text("old", encoding="utf-8")
    (tmp_path / "0007-plan.answer.md").write_text("old answer", encoding="utf-8")
    provider = ManualProvider(answers=tmp_path, timeout=5, poll=0.01)
    agent = write_when_asked(
        tmp_path / "0008-fix-the-grasp.prompt.md", tmp_path / "0008-fix-the-grasp.answer.md", "new"
    )
    assert provider.complete(MESSAGES, purpose="fix the grasp!").text == "new"
    agent.join()


def test_no_answer_file_times_out(tmp_path: Path) -> None:
    provider = ManualProvider(answers=tmp_path, timeout=0.05, poll=0.01)
    with pytest.raises(ManualAnswerTimeoutError) as caught:
        provider.complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        f"no answer appeared in {tmp_path}/0001-plan.answer.md within 0.05 s: write the answer "
        f"to the prompt in {tmp_path}/0001-plan.prompt.md there and run again, or raise "
        "answer_timeout in the [llm] table of lyra.toml"
    )


def test_answer_on_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("first line\n  indented\n.\nnot read\n"))
    provider = make_provider(LLMConfig(provider="manual", answered_by="a person"))
    result = provider.complete(MESSAGES, purpose="plan")
    assert (result.text, result.answered_by, result.completion_tokens) == (
        "first line\n  indented",
        "a person",
        6,
    )
    assert capsys.readouterr().out == (
        "----- lyra request 1 (plan): give this to the model -----\n"
        f"{PROMPT}\n"
        "----- write the answer, then a line holding only '.' -----\n"
    )


def test_end_of_input_ends_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("only line"))
    assert ManualProvider().complete(MESSAGES, purpose="plan").text == "only line"


def test_empty_terminal_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("\n.\n"))
    with pytest.raises(EmptyAnswerError) as caught:
        ManualProvider().complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        "person (manual) gave an empty answer to the plan request: ask again, or answer it "
        "yourself with --llm manual"
    )


def test_a_binary_answer_file_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    from lyra.llm.errors import AnswerFileError

    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "0001-plan.answer.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    provider = ManualProvider(answers=folder, timeout=5, poll=0.01)
    with pytest.raises(AnswerFileError) as caught:
        provider.complete(MESSAGES, purpose="plan")
    assert str(caught.value) == (
        f"the answer file {folder / '0001-plan.answer.md'} is not UTF-8 text (byte 0x89 at "
        "offset 0): save the answer as plain UTF-8 text there and run again (the run resumes "
        "where it stopped)"
    )
