from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from lyra.llm import LLMConfig
from lyra.llm.config import _TOML_TYPES
from lyra.llm.errors import LLMConfigError

TOML = """
[llm]
provider = "openai"
model = "from-toml"
base_url = "http://toml.example/v1"
max_retries = 7
timeout = 30
answers = "answers"
answered_by = "toml-helper"
"""


def workspace(tmp_path: Path, text: str = TOML) -> Path:
    (tmp_path / "lyra.toml").write_text(text, encoding="utf-8")
    return tmp_path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    assert LLMConfig.load(tmp_path, environ={}) == LLMConfig()
    assert LLMConfig() == LLMConfig(provider="openai", model="gpt-4o", api_key_env="OPENAI_API_KEY")


def test_toml_is_read_and_paths_are_relative_to_it(tmp_path: Path) -> None:
    config = LLMConfig.load(workspace(tmp_path), environ={})
    assert config == LLMConfig(
        model="from-toml",
        base_url="http://toml.example/v1",
        max_retries=7,
        timeout=30.0,
        answers=tmp_path / "answers",
        answered_by="toml-helper",
    )


def test_environment_overrides_toml(tmp_path: Path) -> None:
    env = {"LYRA_LLM_MODEL": "from-env", "LYRA_LLM_BASE_URL": "http://env.example/v1"}
    config = LLMConfig.load(workspace(tmp_path), environ=env)
    assert (config.model, config.base_url, config.max_retries) == (
        "from-env",
        "http://env.example/v1",
        7,
    )


def test_spec_overrides_environment(tmp_path: Path) -> None:
    env = {"LYRA_LLM": "manual", "LYRA_LLM_MODEL": "from-env"}
    assert LLMConfig.load(workspace(tmp_path), environ=env).provider == "manual"
    config = LLMConfig.load(workspace(tmp_path), spec="openai:from-cli", environ=env)
    assert (config.provider, config.model, config.base_url) == (
        "openai",
        "from-cli",
        "http://toml.example/v1",
    )


def test_spec_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = LLMConfig(model="kept", answers=Path("/kept"))
    assert LLMConfig.from_spec("openai", base).model == "kept"
    assert LLMConfig.from_spec("openai:llama3.1:8b", base).model == "llama3.1:8b"
    assert LLMConfig.from_spec("manual", base).answers == Path("/kept")
    assert LLMConfig.from_spec("manual:inbox", base).answers == tmp_path / "inbox"
    replay = LLMConfig.from_spec("replay:run.jsonl")
    assert (replay.provider, replay.recording) == ("replay", tmp_path / "run.jsonl")


@pytest.mark.parametrize("spec", ["gpt", "openai:", "manual:", "Replay:x"])
def test_bad_spec(spec: str) -> None:
    with pytest.raises(LLMConfigError) as caught:
        LLMConfig.from_spec(spec)
    assert str(caught.value) == (
        f"unknown --llm '{spec}': use openai, openai:MODEL, manual, manual:DIR, replay "
        "or replay:PATH"
    )


def test_unknown_key(tmp_path: Path) -> None:
    path = workspace(tmp_path, '[llm]\nmodle = "x"\n') / "lyra.toml"
    with pytest.raises(LLMConfigError) as caught:
        LLMConfig.load(tmp_path, environ={})
    assert str(caught.value) == (
        f"{path}: unknown key 'modle' in [llm]; known keys: provider, model, base_url, "
        "api_key_env, timeout, max_retries, temperature, answers, answer_timeout, recording, "
        "answered_by"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("max_retries = true", "max_retries must be an integer, not True"),
        ("max_retries = 2.5", "max_retries must be an integer, not 2.5"),
        ("timeout = '30'", "timeout must be a number, not '30'"),
        ("answers = 3", "answers must be a path string, not 3"),
    ],
)
def test_wrong_type(tmp_path: Path, line: str, message: str) -> None:
    path = workspace(tmp_path, f"[llm]\n{line}\n") / "lyra.toml"
    with pytest.raises(LLMConfigError) as caught:
        LLMConfig.load(tmp_path, environ={})
    assert str(caught.value) == f"{path}: [llm] {message}"


def test_unknown_provider_and_bad_numbers(tmp_path: Path) -> None:
    workspace(tmp_path, '[llm]\nprovider = "claude"\n')
    with pytest.raises(LLMConfigError, match=r"^unknown LLM provider 'claude': use one of "):
        LLMConfig.load(tmp_path, environ={})
    with pytest.raises(LLMConfigError, match=r"^max_retries must be 0 or more"):
        LLMConfig(max_retries=-1)


def test_broken_toml(tmp_path: Path) -> None:
    path = workspace(tmp_path, "[llm\n") / "lyra.toml"
    with pytest.raises(LLMConfigError, match=rf"^{path} is not valid TOML \(.*\): fix the file$"):
        LLMConfig.load(tmp_path, environ={})


def test_every_setting_can_be_written_in_toml() -> None:
    assert list(_TOML_TYPES) == [f.name for f in dataclasses.fields(LLMConfig)]
