"""The studio's teacher: the loop's thread waits for the browser's answer to the open question."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from lyra.curriculum import one_off_task
from lyra.studio.teacher import Answer, Events, NoQuestionError, StudioTeacher, module_diff
from lyra.teachers import SkillRequest
from lyra.workspace import Workspace


def teacher(tmp_path: Path) -> tuple[StudioTeacher, Events]:
    events = Events()
    return StudioTeacher(events, Workspace(tmp_path), lambda p: f"/files/{p.name}"), events


def task():  # type: ignore[no-untyped-def]
    return one_off_task("Put it down.", "ravens", {"objects": []}, [0], [], skill="put_down")


def test_the_loop_waits_for_the_answer_to_the_open_question(tmp_path: Path) -> None:
    studio, events = teacher(tmp_path)
    got: list[str] = []
    thread = threading.Thread(target=lambda: got.append(studio.review_header(task(), "def f():")))
    thread.start()
    while not events.since(0):
        thread.join(0.01)
    [question] = events.since(0)
    assert (question["kind"], question["question"], question["header"]) == (
        "question",
        "header",
        "def f():",
    )
    with pytest.raises(NoQuestionError, match="question 7 is not waiting for an answer"):
        studio.answer(Answer(7, "header", "def g():"))
    assert thread.is_alive()
    studio.answer(Answer(question["seq"], "header", "def g(x: int):"))
    thread.join(5)
    assert got == ["def g(x: int):"]
    assert events.since(1)[0] == {
        "seq": 2,
        "kind": "answered",
        "question": 1,
        "action": "header",
        "text": "def g(x: int):",
    }
    with pytest.raises(
        NoQuestionError, match=r"question 1 is not waiting for an answer \(none is\)"
    ):
        studio.answer(Answer(1, "header", "again"))


def test_closing_the_studio_rejects_the_open_question(tmp_path: Path) -> None:
    studio, events = teacher(tmp_path)
    verdicts: list[SkillRequest | None] = []
    thread = threading.Thread(target=lambda: verdicts.append(studio.teach_missing(task(), "x")))
    thread.start()
    while not events.since(0):
        thread.join(0.01)
    studio.close()
    thread.join(5)
    assert verdicts == [None]
    # After closing, nothing waits: every later question is rejected at once.
    assert studio.teach_missing(task(), "y") is None


def test_frames_stream_as_jpeg_data_urls(tmp_path: Path) -> None:
    studio, events = teacher(tmp_path)
    studio.frame(task(), 1, np.zeros((8, 8, 3), dtype=np.uint8))
    [frame] = events.since(0)
    assert (frame["kind"], frame["round"], frame["n"]) == ("frame", 1, 1)
    assert frame["image"].startswith("data:image/jpeg;base64,/9j/")


def test_the_staged_module_is_shown_against_the_library() -> None:
    assert module_diff("put_down", "a\nb\n", "a\nc\n") == (
        "--- skills/put_down.py (library)\n+++ skills/put_down.py (staged)\n"
        "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
    )
    assert module_diff("put_down", "", "a\n").startswith("--- /dev/null\n")
    assert module_diff(None, "", None) == ""
