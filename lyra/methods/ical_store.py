"""ICAL's memory: examples with their abstractions, as files, indexed by both texts.

The files under ``.lyra/methods/NAME/examples`` are the source of truth; the index beside them
(``index/``) is kept while it was built from the files as they are (a digest of them and of the
embedder beside it says so), and rebuilt from them when the store is opened otherwise.
Storing an example forgets the digest, indexes the example, writes its file all at once (the
file's rename is the commit) and then notes the new digest. A failure before the rename takes
the rows out again; a kill before it leaves rows that the next opening drops with the rest of
the index, as the digest no longer matches, so the memory is as it was; a kill after it leaves
the example kept.
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path

from pydantic import Field

from lyra.examples import Example, example_paths, load_example, save_example
from lyra.files import remove_temporaries, write_atomic
from lyra.memory.embedders import Embedder
from lyra.memory.store import SOURCES_FILE, Memory, files_digest

# An example is indexed twice: by its instruction, and under this suffix by its abstractions.
ABSTRACTIONS_ROW = "--abstractions"


class IcalExample(Example):
    """An example as ICAL keeps it: a plan, and what was learnt about the task beside it.

    Attributes:
        abstractions: the task and causal abstractions, state changes, subgoals and relevant
            state, as the LLM wrote them (empty for a raw demonstration).
        source: the demonstration file it was learnt from, or ``plan`` for a planned task.
        verified: the plan ran on its scene and the teacher accepted it.
    """

    abstractions: str = ""
    source: str = Field(default="plan", description="the demonstration it came from, or `plan`")
    verified: bool = False


class IcalStore:
    """The examples of one ICAL method, searched by instruction and by abstractions."""

    def __init__(self, folder: Path, embedder: Embedder | None) -> None:
        """Open the store in ``folder``, its index rebuilt from the files if it is not theirs.

        Args:
            folder: the method's folder, ``.lyra/methods/NAME``.
            embedder: what the index embeds with (the workspace memory's).
        """
        self.folder = folder
        self.examples_dir = folder / "examples"
        self.embedder = embedder
        # What a killed atomic write left; the caller holds the workspace's lock.
        remove_temporaries([self.examples_dir])
        index = folder / "index"
        noted = index / SOURCES_FILE
        if noted.is_file() and noted.read_text(encoding="utf-8").strip() == self._digest():
            # Embedding every abstraction again on each opening took seconds per hundred.
            self.memory = Memory(index, embedder)
            return
        shutil.rmtree(index, ignore_errors=True)
        self.memory = Memory(index, embedder)
        rows = [row for example in self.examples() for row in _rows(example)]
        if rows:
            self.memory.index_examples(rows)
        self._note()

    def examples(self) -> list[IcalExample]:
        """Every example kept, by file name."""
        return [load_example(path, IcalExample) for path in example_paths(self.examples_dir)]

    def get(self, example_id: str) -> IcalExample | None:
        """The example kept under an id, if any."""
        path = self.examples_dir / f"{example_id}.yaml"
        return load_example(path, IcalExample) if path.is_file() else None

    def add(self, example: IcalExample) -> None:
        """Keep an example: indexed, then its file written at once (the commit)."""
        rows = _rows(example)
        (self.memory.root / SOURCES_FILE).unlink(missing_ok=True)
        self.memory.index_examples(rows)
        try:
            save_example(example, self.examples_dir)
        except BaseException:
            for row in rows:
                self.memory.remove_example(row.id)
            raise
        self._note()

    def _digest(self) -> str:
        return files_digest(self.folder, example_paths(self.examples_dir), self.embedder)

    def _note(self) -> None:
        """Record that the index is now built from the files as they are."""
        write_atomic(self.memory.root / SOURCES_FILE, self._digest() + "\n")

    def retrieve(
        self, instruction: str, correction: str, k: int, backends: Collection[str]
    ) -> list[IcalExample]:
        """The ``k`` examples most like a task, by instruction and abstractions alike.

        Args:
            instruction: the task's instruction.
            correction: the teacher's latest words, searched as well ('' for none).
            k: how many examples.
            backends: the backends whose examples may be shown.
        """
        found = self.memory.retrieve(
            instruction,
            correction=correction or None,
            k_examples=2 * k,  # each example has two rows
            k_skills=0,
            backends=backends,
        )
        ids = dict.fromkeys(hit.id.removesuffix(ABSTRACTIONS_ROW) for hit in found.examples)
        kept = [self.get(example_id) for example_id in ids]
        return [example for example in kept if example is not None][:k]


def _rows(example: IcalExample) -> list[Example]:
    """The index's rows of an example: its instruction, and its abstractions where it has some."""
    plain = Example.model_validate(
        example.model_dump(exclude={"abstractions", "source", "verified"})
    )
    if not example.abstractions.strip():
        return [plain]
    by_abstractions = plain.model_copy(
        update={"id": plain.id + ABSTRACTIONS_ROW, "instruction": example.abstractions}
    )
    return [plain, by_abstractions]
