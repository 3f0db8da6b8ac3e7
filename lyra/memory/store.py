"""The memory: skills and examples in LanceDB under ``.lyra/memory``, searched by text and vector.

The example files and skill modules are the source of truth; these tables are an index that
:meth:`Memory.rebuild` recreates from them, and that the learning loop updates row by row.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Awaitable, Callable, Collection, Coroutine, Hashable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import lancedb
import numpy as np
import numpy.typing as npt
import pyarrow as pa
from lancedb.background_loop import LOOP
from lancedb.db import AsyncConnection
from lancedb.index import FTS, Bitmap, IvfFlat
from lancedb.pydantic import LanceModel
from lancedb.query import AsyncStandardQuery
from lancedb.table import AsyncTable

from lyra.api import PRIMITIVES
from lyra.examples import Example, example_paths, iter_examples
from lyra.files import write_atomic
from lyra.library import SkillRecord
from lyra.library.parse import brief_header, parse_library, skill_paths
from lyra.library.tree import runnable
from lyra.memory.embedders import (
    REQUEST_BATCH,
    Embedder,
    EmbedderConfig,
    describe,
    make_embedder,
)
from lyra.memory.errors import EmbedderMismatchError, EmbedderUnavailableError
from lyra.memory.records import ExampleRow, SkillRow, with_vector
from lyra.memory.retrieval import (
    CALLED_BY,
    METHODS,
    ExampleHit,
    Fused,
    Method,
    Query,
    RankedList,
    Retrieval,
    SkillHit,
    fuse,
)
from lyra.progress import Bar
from lyra.workspace import Workspace

EMBEDDER_KEY = b"lyra.embedder"
# Rows embedded between two steps of a rebuild's progress bar: at 15 ms a row, about 8 s; a
# multiple of the remote embedder's request batch, so its requests are grouped as before.
PROGRESS_ROWS = 4 * REQUEST_BATCH
# The digest of the files (and the embedder) the index was last built from, beside the tables.
SOURCES_FILE = "sources.sha256"
# Where exact vector search stops being fast enough (about 10 ms per 10k rows of 384 floats).
VECTOR_INDEX_MIN_ROWS = 50_000
# The vector index's partitions, and how many of them a search reads (see _vector_rows); its
# name says how it was built, so that optimize replaces an index built otherwise.
VECTOR_PARTITIONS = 256
VECTOR_PROBES = 48
VECTOR_INDEX = f"vector_ivf_flat_{VECTOR_PARTITIONS}"
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_T = TypeVar("_T")
# The rows one search found, best first.
_Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class _Spec:
    """One table: its row model, key column and the column searched by text and embedded.

    ``shown`` are the columns a search returns of each row: what a hit needs. A skill's header
    and calls come from its rows read whole once, not from every search (the skills' full-text
    search took 0.5 ms less for it); an example's snapshot is never shown.
    ``filtered`` is the column retrieval filters rows by, indexed for it; None where a filter
    only picks among a library's few rows. ``whole`` says that the table is that small: it is
    read whole, once, and searched by vector here (in microseconds, where a LanceDB query took
    1.6 ms of CPU time).
    """

    name: str
    model: type[LanceModel]
    key: str
    text: str
    shown: tuple[str, ...]
    filtered: str | None = None
    whole: bool = False


SKILLS = _Spec(
    "skills", SkillRow, key="name", text="summary", shown=("name", "summary"), whole=True
)
EXAMPLES = _Spec(
    "examples",
    ExampleRow,
    key="id",
    text="instruction",
    shown=("id", "instruction", "code", "skills", "backend", "task"),
    filtered="backend",
)


@dataclass(frozen=True)
class _Filter:
    """Which rows of a table a search may return; all of them by default.

    ``where`` is SQL on the table's ``filtered`` column, which is indexed for it. ``drop``
    names rows by key, for a library's few skills: a search fetches as many more rows as it
    may drop and drops them itself, which costs less than LanceDB's filter (the skills'
    full-text search took 2.3 ms with 8 of 32 left out by SQL, 1.8 ms unfiltered).
    """

    where: str | None = None
    drop: Collection[str] = frozenset()


def memory_dir(workspace: Workspace) -> Path:
    """The folder of a workspace's memory: ``.lyra/memory``."""
    return workspace.state_dir / "memory"


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in values)


# The memory uses LanceDB's asynchronous API, on the event loop that its synchronous API runs on
# (a thread of its own, restarted in a forked child): all the searches of a retrieval are then
# in flight at once for one hand-over between threads, where each synchronous search took six.
def _run(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run a LanceDB coroutine to its end."""
    return cast(_T, LOOP.run(coroutine))


def _start(coroutine: Coroutine[Any, Any, _T]) -> Future[_T]:
    """Start a LanceDB coroutine and return at once."""
    return asyncio.run_coroutine_threadsafe(coroutine, LOOP.loop)


class Memory:
    """Skills and examples, indexed for retrieval by full text and (with an embedder) by vector."""

    def __init__(self, root: Path, embedder: Embedder | None) -> None:
        """Open (or start) the memory in folder ``root``.

        Args:
            root: the LanceDB folder, normally ``.lyra/memory`` of a workspace.
            embedder: what turns texts into vectors; None for full-text search only.
        """
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.embedder = embedder
        self._db: AsyncConnection = _run(lancedb.connect_async(root))
        self._tables: dict[str, AsyncTable] = {}
        # What a retrieval reads besides its searches, kept per table until this memory writes
        # to it (an open LanceDB table does not see another process's writes either): the skill
        # headers, calls and vectors, and whether a backend filter drops any example.
        self._derived: dict[str, dict[Hashable, Any]] = {}

    @classmethod
    def open(cls, workspace: Workspace, embedder: Embedder | None) -> Memory:
        """Open the memory of ``workspace`` with the given embedder."""
        return cls(memory_dir(workspace), embedder)

    # Writing -------------------------------------------------------------------------------------

    def index_skill(self, record: SkillRecord) -> None:
        """Add a skill, or replace the row of the skill with the same name."""
        self._upsert(SKILLS, [SkillRow.from_record(record)])

    def index_example(self, example: Example) -> None:
        """Add an example, or replace the row of the example with the same id."""
        self.index_examples([example])

    def index_examples(self, examples: Sequence[Example]) -> None:
        """Add or replace many examples in one write (one table version, one embedding batch)."""
        self._upsert(EXAMPLES, [ExampleRow.from_example(e) for e in examples])

    def optimize(self) -> None:
        """Compact the versions that every write leaves and fold new rows into the text index.

        Rows written since the last optimize are still found, by a slower unindexed scan.
        """
        for spec in (SKILLS, EXAMPLES):
            table = self._table(spec)
            if table is not None:
                _run(table.optimize())
                self._index_filtered(table, spec)
                self._index_vectors(table)

    def remove_skill(self, name: str) -> None:
        """Forget a skill; a name that is not there is ignored."""
        self._remove(SKILLS, name)

    def remove_example(self, example_id: str) -> None:
        """Forget an example; an id that is not there is ignored."""
        self._remove(EXAMPLES, example_id)

    def rebuild(
        self,
        workspace: Workspace,
        skills: Sequence[SkillRecord],
        progress: Callable[[int, str], Bar] | None = None,
    ) -> tuple[int, int]:
        """Recreate both tables from skill records and the workspace's example files.

        This is also how the memory moves to another embedder.

        Args:
            workspace: whose example files to index.
            skills: the skill records to index.
            progress: makes a bar from a number of parts and a label (none by default); a
                part is :data:`PROGRESS_ROWS` rows of one table embedded, or an empty table.

        Returns:
            How many skills and examples were indexed.
        """
        self.forget_sources()
        examples = [ExampleRow.from_example(e) for _, e in iter_examples(workspace.examples_dir)]
        tables = ((SKILLS, [SkillRow.from_record(s) for s in skills]), (EXAMPLES, examples))
        parts = sum(max(1, -(-len(rows) // PROGRESS_ROWS)) for _, rows in tables)
        bar = progress(parts, "memory indexed") if progress else None
        for spec, rows in tables:

            def step(done: int, name: str = spec.name, total: int = len(rows)) -> None:
                if bar is not None:
                    bar.step(True, f"{done} of {total} {name}")

            self._create(spec, rows, step)
        self.note_sources(workspace)
        return len(skills), len(examples)

    def refresh(
        self,
        workspace: Workspace,
        *,
        always: bool = False,
        progress: Callable[[int, str], Bar] | None = None,
    ) -> str | None:
        """Rebuild the index if it is missing or was built from other files; say so in a line.

        The skill modules and example files are the source of truth, so a fresh clone, a
        ``git pull`` or a hand edit is noticed here rather than planning with a stale memory.

        Args:
            workspace: whose files the index is of.
            always: rebuild even a current index (the line still says only why it was stale).
            progress: as for :meth:`rebuild`.

        Returns:
            The line to show a person when the index was stale; None when it was current.
        """
        sources = self.root / SOURCES_FILE
        stored = sources.read_text(encoding="utf-8").strip() if sources.is_file() else None
        current = stored == source_digest(workspace, self.embedder)
        if current and not always:
            return None
        library = parse_library(workspace.skills_dir)
        skills, examples = self.rebuild(workspace, list(library), progress)
        if current:
            return None
        why = (
            "there was no index yet"
            if stored is None
            else "skills/ or examples/ changed since it was built"
        )
        return (
            f"indexed {skills} skills and {examples} examples in {self.root} ({why}; "
            f"embedder: {describe(self.embedder)})"
        )

    def note_sources(self, workspace: Workspace) -> None:
        """Record that the index now matches the workspace's files."""
        write_atomic(self.root / SOURCES_FILE, source_digest(workspace, self.embedder) + "\n")

    def forget_sources(self) -> None:
        """Mark the index as not known to match the files, before rows are written.

        A process that dies part-way through a write leaves it so, and the next
        :meth:`refresh` rebuilds it.
        """
        (self.root / SOURCES_FILE).unlink(missing_ok=True)

    def _create(
        self, spec: _Spec, rows: Sequence[LanceModel], step: Callable[[int], None] | None = None
    ) -> AsyncTable:
        self._derived.pop(spec.name, None)
        table = _run(self._db.create_table(spec.name, schema=self._schema(spec), mode="overwrite"))
        if rows:
            _run(table.add(self._arrow_rows(spec, rows, step)))
        elif step is not None:
            step(0)
        _run(table.create_index(spec.text, config=FTS(), replace=True))
        self._index_filtered(table, spec)
        self._index_vectors(table)
        self._tables[spec.name] = table
        return table

    def _index_filtered(self, table: AsyncTable, spec: _Spec) -> None:
        """Index the column that filters select by, once; ``optimize`` keeps it up to date.

        Without it a filtered search reads the whole column first: the loop's ``retrieve()``
        with 100,000 examples, one in ten another backend's, took 36 ms instead of 29.
        """
        column = spec.filtered
        if column is None or any(column in index.columns for index in _run(table.list_indices())):
            return
        _run(table.create_index(column, config=Bitmap()))

    def _index_vectors(self, table: AsyncTable) -> None:
        """Give a large table a vector index once; ``optimize`` keeps it up to date after that.

        Below :data:`VECTOR_INDEX_MIN_ROWS` an exact scan is fast enough and exact; above it an
        IVF index (flat vectors, so no quantisation error) is more than ten times faster (at
        100k rows, 5 ms instead of 60 ms or more on two cores). An index built with other
        settings (before :data:`VECTOR_INDEX`, LanceDB's default of 24 partitions at 100k rows)
        is replaced.
        """
        if self.embedder is None or _run(table.count_rows()) < VECTOR_INDEX_MIN_ROWS:
            return
        built = [index.name for index in _run(table.list_indices()) if "vector" in index.columns]
        if built == [VECTOR_INDEX]:
            return
        config = IvfFlat(distance_type="cosine", num_partitions=VECTOR_PARTITIONS)
        _run(table.create_index("vector", config=config, name=VECTOR_INDEX))
        for name in built:
            _run(table.drop_index(name))

    def _schema(self, spec: _Spec) -> pa.Schema:
        dim = None if self.embedder is None else self.embedder.dim
        schema = with_vector(spec.model, dim).to_arrow_schema()
        # Kept in the table itself, so an index built by another embedder is noticed on open.
        return schema.with_metadata({EMBEDDER_KEY: describe(self.embedder).encode()})

    def _arrow_rows(
        self, spec: _Spec, rows: Sequence[LanceModel], step: Callable[[int], None] | None = None
    ) -> list[dict[str, Any]]:
        """Rows as dicts with their vectors, embedded in parts of :data:`PROGRESS_ROWS`.

        ``step`` is told how many rows are done after each part. Each text's vector is the
        same whatever part it is embedded in (see :meth:`lyra.memory.minilm.MiniLMEmbedder.embed`).
        """
        dicts = [row.model_dump() for row in rows]
        for start in range(0, len(dicts), PROGRESS_ROWS):
            part = dicts[start : start + PROGRESS_ROWS]
            if self.embedder is not None:
                vectors = self.embedder.embed([d[spec.text] for d in part])
                for d, vector in zip(part, vectors, strict=True):
                    d["vector"] = vector
            if step is not None:
                step(start + len(part))
        return dicts

    def _upsert(self, spec: _Spec, rows: Sequence[LanceModel]) -> None:
        # Not `or`: a LanceDB table has a length, so an empty one is falsy.
        table = self._table(spec)
        if table is None:
            table = self._create(spec, [])
        merge = table.merge_insert(spec.key).when_matched_update_all().when_not_matched_insert_all()
        self._derived.pop(spec.name, None)
        # Typed for a synchronous table; on an asynchronous one, execute returns a coroutine.
        _run(cast(Coroutine[Any, Any, object], merge.execute(self._arrow_rows(spec, rows))))

    def _remove(self, spec: _Spec, key: str) -> None:
        table = self._table(spec)
        if table is not None:
            self._derived.pop(spec.name, None)
            _run(table.delete(f"{spec.key} = {_sql_list([key])}"))

    def _remembered(self, spec: _Spec, key: Hashable, read: Callable[[], Any]) -> Any:
        """``read()`` the first time ``key`` is asked of a table since this memory wrote to it."""
        known = self._derived.setdefault(spec.name, {})
        if key not in known:
            known[key] = read()
        return known[key]

    def _table(self, spec: _Spec) -> AsyncTable | None:
        """Return the open table, None if it was never created; check its embedder first."""
        if spec.name in self._tables:
            return self._tables[spec.name]
        if spec.name not in _run(self._db.list_tables()).tables:
            return None
        table = _run(self._db.open_table(spec.name))
        stored = (_run(table.schema()).metadata or {}).get(EMBEDDER_KEY, b"unknown").decode()
        configured = describe(self.embedder)
        if stored != configured:
            raise EmbedderMismatchError(self.root, stored, configured)
        self._tables[spec.name] = table
        return table

    # Reading -------------------------------------------------------------------------------------

    def search_skills(
        self, queries: Sequence[Query], limit: int, methods: Collection[Method] | None = None
    ) -> list[Fused]:
        """Skills by summary, the ranked lists of every query and method fused by rank."""
        return self._search([(SKILLS, limit, _Filter())], queries, methods)[0]

    def search_examples(
        self, queries: Sequence[Query], limit: int, methods: Collection[Method] | None = None
    ) -> list[Fused]:
        """Examples by instruction, the ranked lists of every query and method fused by rank."""
        return self._search([(EXAMPLES, limit, _Filter())], queries, methods)[0]

    def retrieve(
        self,
        instruction: str,
        correction: str | None = None,
        hints: Sequence[str] = (),
        k_examples: int = 10,
        k_skills: int = 5,
        methods: Collection[Method] | None = None,
        capabilities: Collection[str] | None = None,
        backends: Collection[str] | None = None,
    ) -> Retrieval:
        """What planning a task needs: similar examples and the relevant skill headers.

        Args:
            instruction: the task, as the person or curriculum said it.
            correction: the person's latest feedback on a failed attempt, searched as well.
            hints: task descriptions the person gave to steer retrieval; each is searched as
                well, and a skill whose name a hint contains is always included.
            k_examples: how many examples to return.
            k_skills: how many skills to return by docstring similarity; skills that the
                returned examples call, and hinted skills, come on top.
            methods: ``text``, ``vector`` or both (hybrid, fused by reciprocal rank);
                default: both where there is an embedder, else ``text``.
            capabilities: the primitives of the backend the task runs on; only skills that
                reach no other primitive, directly or through the skills they call, are
                offered. None: every skill.
            backends: the backends whose examples may be shown; None: every example.

        Returns:
            The queries run, the examples best first, and the skills in prompt order.
        """
        queries = [Query("instruction", instruction)]
        if correction:
            queries.append(Query("correction", correction))
        queries += [Query(f"hint {i}", hint) for i, hint in enumerate(hints, start=1)]
        usable = self._usable_skills(capabilities)
        unusable = _Filter() if usable is None else _Filter(drop=set(self._skills()) - usable)
        found, similar = self._search(
            [
                (EXAMPLES, k_examples, _Filter(where=self._example_filter(backends))),
                (SKILLS, k_skills, unusable),
            ],
            queries,
            methods,
        )
        examples = [_example_hit(f) for f in found]
        hits = self._skill_hits(similar, examples, hints)
        if usable is not None:
            hits = tuple(hit for hit in hits if hit.name in usable)
        return Retrieval(tuple(queries), tuple(examples), hits)

    def _usable_skills(self, capabilities: Collection[str] | None) -> set[str] | None:
        """The skills a backend with these primitives can run; None when that is every skill."""
        if capabilities is None:
            return None
        calls = {name: skill.calls for name, skill in self._skills().items()}
        # The value types (Point, Pose) come from lyra.api too; only primitives can be missing.
        usable = runnable(calls, set(PRIMITIVES) - set(capabilities))
        return usable if usable != set(calls) else None

    def _example_filter(self, backends: Collection[str] | None) -> str | None:
        """The filter that keeps the examples of these backends; None when none would go."""
        table = self._table(EXAMPLES)
        if backends is None or table is None:
            return None
        kept = f"backend IN ({_sql_list(sorted(backends))})"
        dropped = self._remembered(EXAMPLES, kept, lambda: _run(table.count_rows(f"NOT ({kept})")))
        return kept if dropped else None

    def _methods(self, methods: Collection[Method] | None) -> Collection[Method]:
        if methods is None:
            return ("text",) if self.embedder is None else METHODS
        if "vector" in methods and self.embedder is None:
            raise EmbedderUnavailableError(
                "vector search needs an embedder, and LYRA_EMBEDDER is none: "
                "search by text only, or set LYRA_EMBEDDER and run `lyra memory rebuild`"
            )
        return methods

    def _search(
        self,
        tables: Sequence[tuple[_Spec, int, _Filter]],
        queries: Sequence[Query],
        methods: Collection[Method] | None,
    ) -> list[list[Fused]]:
        """For each (table, limit, filter), its rows for the queries: every list fused by rank.

        Every list of every table is in flight at once, and so costs about as much as the
        slowest: LanceDB does the work on its own threads. Full-text lists need no vectors, so
        they run while this thread embeds the queries. A text that two queries share (a hint
        that repeats the instruction) is embedded and searched once, and its lists count for
        each of them in the fusion, as two searches of it would.
        """
        methods = self._methods(methods)
        searches = [self._searches(spec, limit, keep, methods) for spec, limit, keep in tables]
        distinct = list(dict.fromkeys(query.text for query in queries))
        texts = distinct if "text" in methods else []
        text = _start(_every([s.text(t) for t in texts] for s in searches))
        embedder = self.embedder if "vector" in methods else None
        vectors = [] if embedder is None else list(embedder.embed(distinct))
        vector = _start(_every([s.vector(v) for v in vectors] for s in searches))
        order = [distinct.index(query.text) for query in queries]
        lists = zip(searches, text.result(), vector.result(), strict=True)
        return [fuse(_lists(queries, order, t, v), s.spec.key)[: s.limit] for s, t, v in lists]

    def _searches(
        self, spec: _Spec, limit: int, keep: _Filter, methods: Collection[Method]
    ) -> _Searches:
        table = self._table(spec)
        if not (spec.whole and table is not None and "vector" in methods):
            return _Searches(spec, table, limit, keep)
        whole = self._remembered(spec, "whole", lambda: _run(_read_whole(table, spec)))
        return _Searches(spec, table, limit, keep, cast(_Whole, whole))

    def _skill_hits(
        self, similar: list[Fused], examples: list[ExampleHit], hints: Sequence[str]
    ) -> tuple[SkillHit, ...]:
        # Insertion order is prompt order: what the person named, then similarity, then usage.
        via: dict[str, list[str]] = {}
        for i, hint in enumerate(hints, start=1):
            for name in IDENTIFIER.findall(hint):
                via.setdefault(name, []).append(f"named by hint {i}")
        for fused in similar:
            via.setdefault(fused.key, []).append("similar")
        for example in examples:
            for name in example.skills:
                via.setdefault(name, []).append(f"{CALLED_BY}{example.id}")
        headers = self._headers(via)
        by_name = {fused.key: fused for fused in similar}
        return tuple(
            SkillHit(
                name=name,
                header=headers[name][0],
                brief=headers[name][1],
                score=by_name[name].score if name in by_name else 0.0,
                matches=by_name[name].matches if name in by_name else (),
                via=tuple(dict.fromkeys(reasons)),
            )
            for name, reasons in via.items()
            if name in headers
        )

    def _headers(self, names: Collection[str]) -> dict[str, tuple[str, str]]:
        """Each skill's header, whole and brief, by name."""
        skills = self._skills()
        return {name: (skills[name].header, skills[name].brief) for name in names if name in skills}

    def _skills(self) -> dict[str, _Skill]:
        """Every skill's header and calls, by name, read whole: the table is a library's size."""
        table = self._table(SKILLS)
        if table is None:
            return {}
        return cast(
            dict[str, _Skill],
            self._remembered(SKILLS, "skills", lambda: _run(_read_skills(table))),
        )


@dataclass(frozen=True)
class _Skill:
    """What a retrieval shows and checks of a skill besides its similarity."""

    header: str
    brief: str
    calls: tuple[list[str], list[str]]  # the primitives and the skills it imports


async def _read_skills(table: AsyncTable) -> dict[str, _Skill]:
    columns = ["name", "header", "signature", "docstring", "calls_primitives", "calls_skills"]
    rows = await table.query().select(columns).to_list()
    return {
        row["name"]: _Skill(
            header=row["header"],
            brief=brief_header(row["signature"], row["docstring"]),
            calls=(row["calls_primitives"], row["calls_skills"]),
        )
        for row in rows
    }


@dataclass(frozen=True)
class _Whole:
    """A small table's rows, the columns its searches show, and their vectors scaled to length 1."""

    rows: _Rows
    vectors: npt.NDArray[np.float64]

    def nearest(
        self, vector: npt.NDArray[np.float32], key: str, limit: int, keep: _Filter
    ) -> _Rows:
        """The best ``limit`` rows by cosine similarity to ``vector``, as LanceDB's search gives."""
        scores = self.vectors @ (vector / np.linalg.norm(vector))
        found = [
            {**row, "score": float(score)}
            for row, score in zip(self.rows, scores, strict=True)
            if row[key] not in keep.drop
        ]
        found.sort(key=lambda row: -row["score"])
        return _fixed_order(found[: limit + 1], limit, key)


async def _read_whole(table: AsyncTable, spec: _Spec) -> _Whole:
    found = await table.query().select([*spec.shown, "vector"]).to_arrow()
    column = found["vector"]
    flat = column.combine_chunks().flatten().to_numpy()
    vectors = flat.astype(np.float64).reshape(len(found), column.type.list_size)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return _Whole(found.drop_columns(["vector"]).to_pylist(), vectors / norms)


@dataclass(frozen=True)
class _Searches:
    """A table's searches in one retrieval: its best ``limit`` rows of those ``keep`` keeps.

    Each list is twice the answer deep, so that rows ranked well by several lists can rise.
    ``whole`` is the table read whole, for a vector search here instead of LanceDB's.
    """

    spec: _Spec
    table: AsyncTable | None
    limit: int
    keep: _Filter
    whole: _Whole | None = None

    async def text(self, text: str) -> _Rows:
        if self.table is None or self.limit < 1:
            return []
        return await _text_rows(self.table, self.spec, text, 2 * self.limit, self.keep)

    async def vector(self, vector: npt.NDArray[np.float32]) -> _Rows:
        if self.table is None or self.limit < 1:
            return []
        if self.whole is not None:
            return self.whole.nearest(vector, self.spec.key, 2 * self.limit, self.keep)
        return await _vector_rows(self.table, self.spec, vector, 2 * self.limit, self.keep)


async def _every(searches: Iterable[Sequence[Awaitable[_Rows]]]) -> list[list[_Rows]]:
    """Await all the searches of all the tables at once; each table's lists come back together."""
    return list(await asyncio.gather(*(asyncio.gather(*table) for table in searches)))


def _lists(
    queries: Sequence[Query], order: Sequence[int], text: list[_Rows], vector: list[_Rows]
) -> list[RankedList]:
    """The ranked lists of each query in turn, full text before vector (fusion keeps this order).

    ``text`` and ``vector`` hold the lists of each distinct text; ``order`` says which is whose.
    """
    lists = []
    for query, i in zip(queries, order, strict=True):
        if text:
            lists.append(RankedList(query.label, "text", text[i]))
        if vector:
            lists.append(RankedList(query.label, "vector", vector[i]))
    return lists


async def _text_rows(table: AsyncTable, spec: _Spec, text: str, limit: int, keep: _Filter) -> _Rows:
    # A plain string is matched as words: quotes or colons in an instruction are not syntax.
    found = table.query().nearest_to_text(text, columns=spec.text)
    rows = await _fetch(found, spec, keep, limit + 1, "_score")
    return _fixed_order([{**row, "score": row["_score"]} for row in rows], limit, spec.key)


async def _vector_rows(
    table: AsyncTable, spec: _Spec, vector: npt.NDArray[np.float32], limit: int, keep: _Filter
) -> _Rows:
    # With an IVF index, 48 of its 256 partitions are searched (19k of 100k rows): 5.0 ms
    # where LanceDB's default index, 10 of 24 partitions (42k rows), took 8.5 ms, and 64
    # partitions 5.8 ms. On MiniLM vectors of 100,000 generated instructions, the top 20 of
    # 194 queries (tabletop, paraphrased, and the curricula's) were those of exact search in
    # each of seven builds, as with the default index; 32 partitions missed rows in up to 5
    # queries. On structureless random vectors recall@20 is 0.39 (the default index: 0.57).
    # Without an index it has no effect.
    found = table.query().nearest_to(vector).distance_type("cosine").nprobes(VECTOR_PROBES)
    rows = await _fetch(found, spec, keep, limit + 1, "_distance")
    return _fixed_order([{**row, "score": 1.0 - row["_distance"]} for row in rows], limit, spec.key)


async def _fetch(
    found: AsyncStandardQuery, spec: _Spec, keep: _Filter, n: int, score: str
) -> _Rows:
    """The best ``n`` rows of a search that ``keep`` keeps, with the search's ``score`` column."""
    if keep.where is not None:
        found = found.where(keep.where)
    rows = await found.select([*spec.shown, score]).limit(n + len(keep.drop)).to_list()
    return [row for row in rows if row[spec.key] not in keep.drop][:n]


def _fixed_order(rows: _Rows, limit: int, key: str) -> _Rows:
    """Of a search's best ``limit + 1`` rows, the best ``limit``, in an order of content alone.

    LanceDB returns rows of equal score in no fixed order once rows were added after the text
    index was built: "Close the drawer." and "Close the window." score the same for "Close the
    door.", came back one way round in about two calls of three and the other way in the rest,
    and took their fused ranks with them, so one memory gave two prompts. Rows of equal score go
    by ``key`` (as fusion breaks ties), so a memory rebuilt from the files orders them as one
    that grew row by row. Rows that tie with the one just past the cut are left out: which of
    them make the cut would be a matter of fetch order, and fetching them all costs too much
    (with 100,000 templated instructions a tie at rank 20 held 6,000 rows), while the other
    method's list still ranks them by something that tells them apart.
    """
    if len(rows) > limit:
        cut = rows[limit]["score"]
        rows = [row for row in rows if row["score"] != cut]
    rows.sort(key=lambda row: (-row["score"], row[key]))
    return rows[:limit]


def _example_hit(fused: Fused) -> ExampleHit:
    row = fused.row
    return ExampleHit(
        id=row["id"],
        instruction=row["instruction"],
        code=row["code"],
        skills=tuple(row["skills"]),
        backend=row["backend"],
        task=row["task"],
        score=fused.score,
        matches=fused.matches,
    )


def source_digest(workspace: Workspace, embedder: Embedder | None) -> str:
    """A digest of what an index is built from.

    Every skill module and example file, by path and content, and the embedder.
    """
    files = [*skill_paths(workspace.skills_dir), *example_paths(workspace.examples_dir)]
    return files_digest(workspace.root, files, embedder)


def files_digest(root: Path, files: Iterable[Path], embedder: Embedder | None) -> str:
    """A digest of files beneath ``root``, by path and content, and of the embedder."""
    digest = hashlib.sha256(describe(embedder).encode())
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def open_memory(workspace: Workspace, config: EmbedderConfig | None = None) -> Memory:
    """Open a workspace's memory with the embedder the config (default: the environment) names."""
    return Memory.open(workspace, make_embedder(config or EmbedderConfig.from_env()))
