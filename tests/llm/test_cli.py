from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from lyra.llm import LoggedProvider
from lyra.llm.cli import register
from lyra.llm.session import session_log_path
from lyra.workspace import Workspace

from .conftest import MESSAGES
from .test_session import Scripted


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="lyra")
    register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_usage_of_every_session(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = session_log_path(Workspace(tmp_path))
    assert log.parent == tmp_path / ".lyra" / "sessions"
    LoggedProvider(Scripted("a", "b"), log).complete(MESSAGES, purpose="plan")
    assert run("llm", "--workspace", str(tmp_path), "usage") == 0
    assert capsys.readouterr().out == (
        "purpose  calls  prompt_tokens  completion_tokens  latency_s\n"
        "plan         1  ~         100  ~              10        2.5\n"
        "total        1  ~         100  ~              10        2.5\n"
    )


def test_config_shows_the_settings_in_effect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("LYRA_LLM", "LYRA_LLM_MODEL", "LYRA_LLM_BASE_URL", "LYRA_LLM_ANSWERED_BY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert run("llm", "--workspace", str(tmp_path), "config", "--llm", "openai:small") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["provider = openai", "model = small"]
    assert out[-1] == "# OPENAI_API_KEY is not set"


def test_registering_the_commands_does_not_import_the_client() -> None:
    code = "import sys, lyra.llm.cli, lyra.llm; print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "False\n"
