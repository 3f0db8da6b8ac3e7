"""What a retrieval returns, and reciprocal-rank fusion of several ranked lists into one.

Every hit says which query found it, by which method, at which rank and with which score, so a
person can see why a skill or an example reached the prompt.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Method = Literal["text", "vector"]
METHODS: tuple[Method, ...] = ("text", "vector")
# The constant of reciprocal-rank fusion (Cormack et al. 2009): damps the weight of the top ranks
# so that agreement between lists counts more than one list's first place.
RRF_K = 60
# How a skill's ``via`` names an example that calls it.
CALLED_BY = "called by example "


@dataclass(frozen=True)
class Query:
    """One text searched for, and its role: ``instruction``, ``correction`` or ``hint N``."""

    label: str
    text: str


@dataclass(frozen=True)
class Match:
    """One ranked list that found a hit.

    Attributes:
        query: the label of the query that found it.
        method: ``text`` (BM25 full-text) or ``vector`` (embedding similarity).
        rank: its 1-based place in that list.
        score: BM25 score for ``text``, cosine similarity for ``vector``.
    """

    query: str
    method: Method
    rank: int
    score: float


@dataclass(frozen=True)
class RankedList:
    """The rows one query found by one method, best first; each row carries its ``score``."""

    query: str
    method: Method
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class Fused:
    """One row after fusion: its fused score and every list that found it."""

    key: str
    row: dict[str, Any]
    score: float
    matches: tuple[Match, ...]


def fuse(lists: Sequence[RankedList], key: str) -> list[Fused]:
    """Merge ranked lists by reciprocal rank: each list adds ``1 / (RRF_K + rank)`` to a row.

    Args:
        lists: the ranked lists, each best first.
        key: the row field that identifies a row across lists.

    Returns:
        The rows found by any list, best fused score first (ties by key, for a stable order).
    """
    rows: dict[str, dict[str, Any]] = {}
    scores: dict[str, float] = {}
    matches: dict[str, list[Match]] = {}
    for ranked in lists:
        for rank, row in enumerate(ranked.rows, start=1):
            k = row[key]
            rows.setdefault(k, row)
            scores[k] = scores.get(k, 0.0) + 1.0 / (RRF_K + rank)
            matches.setdefault(k, []).append(Match(ranked.query, ranked.method, rank, row["score"]))
    order = sorted(scores, key=lambda k: (-scores[k], k))
    return [Fused(k, rows[k], scores[k], tuple(matches[k])) for k in order]


@dataclass(frozen=True)
class ExampleHit:
    """A stored example similar to the task: its instruction and plan code go into the prompt."""

    id: str
    instruction: str
    code: str
    skills: tuple[str, ...]
    backend: str
    task: str | None
    score: float
    matches: tuple[Match, ...]


@dataclass(frozen=True)
class SkillHit:
    """A skill whose header goes into the prompt.

    Attributes:
        name: the skill.
        header: its signature and docstring.
        brief: its signature, the docstring's first paragraph and the first sentence of each
            argument: what a prompt that calls the skill shows.
        score: fused similarity score; 0 when only a hint or an example brought it.
        matches: the similarity lists that found it (empty when none did).
        via: why it is here, in order: ``named by hint N``, ``similar``,
            ``called by example ID``.
    """

    name: str
    header: str
    brief: str
    score: float
    matches: tuple[Match, ...] = ()
    via: tuple[str, ...] = field(default=())

    def brought_by(self, examples: Collection[str], agreed: Collection[Method] = ()) -> bool:
        """Whether a hint, similarity or one of these examples (by id) brought the skill.

        Args:
            examples: the ids of the examples whose calls count.
            agreed: the search methods that must all have found the skill for its similarity
                to count: in hybrid search, a skill that only one list ranks is a weak match
                (a shared stop word, or the nearest of unrelated docstrings).
        """
        called = {f"{CALLED_BY}{id_}" for id_ in examples}
        found = {match.method for match in self.matches}
        return any(
            reason in called
            if reason.startswith(CALLED_BY)
            else reason != "similar" or found >= set(agreed)
            for reason in self.via
        )


@dataclass(frozen=True)
class Retrieval:
    """What planning one task retrieved from the memory."""

    queries: tuple[Query, ...]
    examples: tuple[ExampleHit, ...]
    skills: tuple[SkillHit, ...]
