"""The typed rows of the memory's two LanceDB tables: one record per skill, one per example."""

from __future__ import annotations

import json

from lancedb.pydantic import LanceModel, Vector
from pydantic import create_model

from lyra.examples import Example
from lyra.library import SkillRecord


class SkillRow(LanceModel):
    """A skill as the memory holds it: searched by its summary, shown to the LLM as its header.

    The summary is the docstring's first line, the sentence that says what the behaviour is;
    the ``Args:`` section below it would blur the match with parameter names.
    """

    name: str
    summary: str
    docstring: str
    header: str
    signature: str
    path: str
    source_hash: str
    calls_skills: list[str]
    calls_primitives: list[str]

    @classmethod
    def from_record(cls, record: SkillRecord) -> SkillRow:
        """Copy the fields of a parsed skill module."""
        return cls(
            name=record.name,
            summary=record.summary,
            docstring=record.docstring,
            header=record.header,
            signature=record.signature,
            path=str(record.path),
            source_hash=record.source_hash,
            calls_skills=list(record.calls_skills),
            calls_primitives=list(record.calls_primitives),
        )


class ExampleRow(LanceModel):
    """An accepted example as the memory holds it: searched by instruction."""

    id: str
    instruction: str
    code: str
    skills: list[str]
    backend: str
    task: str | None
    snapshot: str

    @classmethod
    def from_example(cls, example: Example) -> ExampleRow:
        """Copy an example file's fields; the snapshot becomes JSON text (poses, not queried)."""
        return cls(
            id=example.id,
            instruction=example.instruction,
            code=example.code,
            skills=list(example.skills),
            backend=example.backend,
            task=example.task,
            snapshot=json.dumps(example.snapshot, sort_keys=True),
        )


def with_vector(model: type[LanceModel], dim: int | None) -> type[LanceModel]:
    """Return ``model`` with a ``vector`` column of ``dim`` floats, or ``model`` itself if None.

    The dimension is the embedder's, known only at run time, hence a model made on the fly.
    """
    if dim is None:
        return model
    return create_model(f"{model.__name__}Vector", __base__=model, vector=(Vector(dim), ...))
