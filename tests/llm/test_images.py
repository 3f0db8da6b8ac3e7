"""Pictures in a message: image parts for the chat server, PNG files beside a manual prompt.

The chat server is a real OpenAI-compatible server on 127.0.0.1; the manual folder's answer is
written by the test, as an agent would.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from lyra.llm import Image, LLMConfig, LoggedProvider, ManualProvider, ReplayProvider
from lyra.llm.openai_provider import OpenAIProvider
from tests.chat_server import ChatServer, answer

# The smallest PNG: a signature and nothing more is enough for bytes that must arrive unchanged.
FRAME = Image("000-pick.png", b"\x89PNG\r\n\x1a\n-a-frame-")
SECOND = Image("001-place.png", b"\x89PNG\r\n\x1a\n-another-")


def messages() -> list:
    from lyra.llm import Message

    return [
        Message("system", "You write robot code."),
        Message("user", "The red block is at (0.45, -0.10).", (FRAME, SECOND)),
    ]


def test_pictures_reach_the_chat_server_as_image_parts(chat_server: ChatServer) -> None:
    config = LLMConfig(model="test-model", base_url=chat_server.url, timeout=5)
    chat_server.replies = [answer("ok")]
    OpenAIProvider(config, api_key="sk-test").complete(messages(), purpose="ical_abstraction")
    system, user = chat_server.requests[0].body["messages"]
    assert system == {"role": "system", "content": "You write robot code."}
    assert user["content"] == [
        {"type": "text", "text": "The red block is at (0.45, -0.10)."},
        *(
            {
                "type": "image_url",
                "image_url": {"url": "data:image/png;base64," + base64.b64encode(i.png).decode()},
            }
            for i in (FRAME, SECOND)
        ),
    ]


def test_the_manual_folder_gets_the_pictures_beside_the_prompt(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "0001-ical_abstraction.answer.md").write_text("ok")
    provider = ManualProvider(answers=folder, poll=0.01, timeout=5)
    provider.complete(messages(), purpose="ical_abstraction")
    assert (folder / "0001-ical_abstraction.image-1.png").read_bytes() == FRAME.png
    assert (folder / "0001-ical_abstraction.image-2.png").read_bytes() == SECOND.png
    prompt = (folder / "0001-ical_abstraction.prompt.md").read_text()
    assert prompt.endswith(
        "The red block is at (0.45, -0.10).\n\n## images\n\n"
        "The 2 pictures of this prompt, beside this file, in order:\n"
        "- 0001-ical_abstraction.image-1.png (000-pick.png)\n"
        "- 0001-ical_abstraction.image-2.png (001-place.png)\n"
    )


def test_the_log_names_the_pictures_and_a_replay_matches_the_text(tmp_path: Path) -> None:
    folder = tmp_path / "inbox"
    folder.mkdir()
    (folder / "0001-ical_abstraction.answer.md").write_text("ok")
    log = tmp_path / "session.jsonl"
    logged = LoggedProvider(ManualProvider(answers=folder, poll=0.01, timeout=5), log)
    logged.complete(messages(), purpose="ical_abstraction", task="t")
    record = json.loads(log.read_text())
    assert record["messages"][1] == {
        "role": "user",
        "content": "The red block is at (0.45, -0.10).",
        "images": ["000-pick.png", "001-place.png"],
    }
    replay = ReplayProvider(log)
    assert replay.complete(messages(), purpose="ical_abstraction", task="t").text == "ok"
    assert replay.differences == []
