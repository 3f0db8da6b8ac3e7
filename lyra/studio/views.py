"""What the studio's pages show, read from the records the rest of lyra keeps.

Each function returns plain data for the browser: the curricula and their progress, a scene's
picture, the skill library (tree, source, history, callers, validating tasks), what the memory
retrieves for a query, the recorded LLM sessions and the result tables. None of it is computed
here a second way: the library's parser and history, the memory's retrieval and the session
logs are asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lyra.curriculum import load_curriculum, progress_on_file
from lyra.errors import LyraError
from lyra.examples import iter_examples
from lyra.studio.runs import inside
from lyra.workspace import Workspace

# Folders that are never browsed: lyra's own state, virtual environments, caches, git.
_SKIP = {".lyra", ".venv", "venv", ".git", "node_modules", "__pycache__", ".mypy_cache"}


def walk(root: Path, pattern: str) -> Iterator[Path]:
    """Files under ``root`` matching ``pattern`` (a glob), skipping state and environments."""
    for path in sorted(root.rglob(pattern)):
        if path.is_file() and not _SKIP & set(path.relative_to(root).parts[:-1]):
            yield path


def curricula(ws: Workspace) -> list[dict[str, Any]]:
    """Every curriculum in the workspace, its tasks, which are accepted, and the next one."""
    found: list[dict[str, Any]] = []
    for path in walk(ws.root / "curricula", "*.yaml"):
        try:
            curriculum = load_curriculum(path)
        except LyraError as error:
            found.append({"path": _rel(ws, path), "error": str(error)})
            continue
        progress = progress_on_file(ws, curriculum.name)
        tasks = [
            {
                "id": t.id,
                "instruction": t.instruction,
                "skill": t.skill.name if t.skill else None,
                "accepted": t.id in progress.accepted,
            }
            for t in curriculum.tasks
        ]
        following = next((t["id"] for t in tasks if not t["accepted"]), None)
        found.append(
            {
                "path": _rel(ws, path),
                "name": curriculum.name,
                "backend": curriculum.backend,
                "tasks": tasks,
                "next": following,
            }
        )
    return found


def scene_png(ws: Workspace, curriculum: str, task_id: str, seed: int | None) -> bytes:
    """A curriculum task's scene laid out on a seed (its first by default), as a PNG.

    Raises:
        LyraError: no such task.
    """
    import io

    from PIL import Image

    from lyra.backend import make

    loaded = load_curriculum(inside(ws.root, curriculum))
    task = next((t for t in loaded.tasks if t.id == task_id), None)
    if task is None:
        raise LyraError(f"{curriculum} has no task '{task_id}'")
    backend = make(task.backend)
    try:
        backend.reset(task.scene, task.seeds[0] if seed is None else seed)
        backend.park()
        image = backend.render()
    finally:
        backend.close()
    buffer = io.BytesIO()
    Image.fromarray(image[..., :3]).save(buffer, "PNG")
    return buffer.getvalue()


# -- the library --------------------------------------------------------------------------


def library(ws: Workspace) -> dict[str, Any]:
    """Every skill with its summary, callers and callees, and the tree drawn as SVG."""
    from lyra.library.parse import parse_library
    from lyra.library.tree import SkillTree

    parsed = parse_library(ws.skills_dir)
    tree = SkillTree.of(parsed)
    return {
        "skills": [
            {
                "name": record.name,
                "summary": record.summary,
                "callers": list(tree.callers.get(record.name, ())),
                "callees": list(tree.callees.get(record.name, ())),
            }
            for record in parsed
        ],
        "problems": [str(problem) for problem in parsed.problems],
        "svg": tree.to_svg() if len(parsed) else "",
    }


def skill(ws: Workspace, name: str) -> dict[str, Any]:
    """One skill: its source, docstring, history, callers and the tasks that validate it.

    Raises:
        LyraError: no such skill.
    """
    from lyra.library.history import import_from_git
    from lyra.library.parse import parse_library, source_hash
    from lyra.library.tree import SkillTree

    parsed = parse_library(ws.skills_dir)
    record = parsed.get(name)
    tree = SkillTree.of(parsed)
    source = record.path.read_text(encoding="utf-8")
    # The same versions `lyra skills history` lists: lyra's commits in git count too.
    versions = import_from_git(ws, name)
    current = next(
        (v.version for v in reversed(versions) if v.source_hash == source_hash(source)), None
    )
    validating = [
        {"id": e.id, "task": e.task, "instruction": e.instruction}
        for _, e in iter_examples(ws.examples_dir)
        if name in tree.reach(e.skills)
    ]
    return {
        "name": name,
        "signature": record.signature,
        "docstring": record.docstring,
        "source": source,
        "versions": [asdict(v) for v in versions],
        "current": current,
        "callers": list(tree.callers.get(name, ())),
        "callees": list(tree.callees.get(name, ())),
        "primitives": list(record.calls_primitives),
        "validating": validating,
    }


def version_source(ws: Workspace, name: str, version: int) -> str:
    """The module text of one recorded version of a skill."""
    from lyra.library.history import source_of

    return source_of(ws, name, version)


def revert(ws: Workspace, name: str, to: int) -> dict[str, Any]:
    """Restore a recorded version, as ``lyra skills revert`` does, and commit it where git is.

    Raises:
        LyraError: the version does not exist or no longer fits the library (the message says).
    """
    from lyra.library import history
    from lyra.lock import locked

    with locked(ws):
        history.import_from_git(ws, name)
        patch = history.revert(ws, name, to, task="studio")
        commit = history.commit_step(ws, patch, "studio")
    latest = history.versions(ws, name)[-1].version
    return {"summary": patch.summary, "version": latest, "commit": commit}


# -- the memory ---------------------------------------------------------------------------


def memory_search(
    ws: Workspace,
    query: str,
    hints: list[str],
    correction: str | None,
    backend: str | None,
    refresh: bool,
) -> dict[str, Any]:
    """What planning would retrieve for ``query``, with and without the hints, and why.

    Args:
        ws: the workspace.
        query: the instruction.
        hints: the person's hints; the skills only they bring are marked.
        correction: the person's latest feedback, searched as well.
        backend: plan as on this backend does: only skills it can run, examples it may show
            (None: everything, as ``lyra memory search``).
        refresh: bring the index up to date with the files first (not while a task is taught).
    """
    from lyra.backend import backend_spec
    from lyra.memory.store import open_memory

    memory = open_memory(ws)
    if refresh:
        memory.refresh(ws)
    spec = backend_spec(backend) if backend else None
    scope: dict[str, Any] = (
        {"capabilities": spec.capabilities, "backends": spec.examples_from()} if spec else {}
    )
    with_hints = memory.retrieve(query, correction, hints, **scope)
    plain = memory.retrieve(query, correction, **scope) if hints else with_hints
    plain_skills = {s.name for s in plain.skills}
    examples = {e.id: e for _, e in iter_examples(ws.examples_dir)}
    return {
        "queries": [{"label": q.label, "text": q.text} for q in with_hints.queries],
        "examples": [
            {
                "id": hit.id,
                "instruction": hit.instruction,
                "score": hit.score,
                "found_by": [asdict(m) for m in hit.matches],
                "code": hit.code,
                "task": hit.task,
                "backend": hit.backend,
                "seed": examples[hit.id].seed if hit.id in examples else None,
                "notes": examples[hit.id].notes if hit.id in examples else "",
                "snapshot": examples[hit.id].snapshot if hit.id in examples else {},
            }
            for hit in with_hints.examples
        ],
        "skills": [
            {
                "name": hit.name,
                "score": hit.score,
                "via": list(hit.via),
                "found_by": [asdict(m) for m in hit.matches],
                "header": hit.header,
                "by_hint_only": hit.name not in plain_skills,
            }
            for hit in with_hints.skills
        ],
    }


# -- session logs -------------------------------------------------------------------------

# Purposes that start a round: one answer run on every seed.
_ROUND_PURPOSES = {"skill_learning", "refinement", "plan"}


def sessions(ws: Workspace) -> list[dict[str, Any]]:
    """Every session log: the studio's and the command line's, and the recorded ones."""
    logs = [*walk(ws.state_dir / "sessions", "*.jsonl")] if ws.state_dir.is_dir() else []
    for folder in ("curricula", "evals", "demos"):
        logs += [p for p in walk(ws.root / folder, "*.jsonl") if "sessions" in p.parts]
    return [{"path": _rel(ws, p), "bytes": p.stat().st_size} for p in logs]


def session(ws: Workspace, relative: str) -> dict[str, Any]:
    """One session log: its calls in order, grouped by task into rounds, and its usage."""
    from lyra.llm.base import render_prompt
    from lyra.llm.session import read_log, usage_summary

    path = inside(ws.root, relative)
    records = read_log(path)
    tasks: dict[str, dict[str, Any]] = {}
    for r in records:
        entry = tasks.setdefault(r.task or "?", {"task": r.task, "rounds": 0, "calls": 0})
        entry["calls"] += 1
        entry["rounds"] += r.purpose in _ROUND_PURPOSES
    return {
        "path": relative,
        "tasks": list(tasks.values()),
        "usage": {k: asdict(v) for k, v in usage_summary(records).items()},
        "calls": [
            {
                "index": r.index,
                "purpose": r.purpose,
                "task": r.task,
                "model": r.model,
                "prompt_tokens": r.prompt_tokens,
                "completion_tokens": r.completion_tokens,
                "prompt": render_prompt(r.messages),
                "answer": r.answer,
            }
            for r in records
        ],
    }


# -- result tables ------------------------------------------------------------------------


def results(ws: Workspace, web_path: Any) -> list[dict[str, Any]]:
    """The result tables written in the workspace (``lyra eval --out``, docs/results.md).

    Each is split into headings, tables and text; its plots (``plots/*.svg`` beside it) come
    as links the file route serves.
    """
    found = []
    for path in [*walk(ws.root / "evals", "results.md"), *walk(ws.root / "docs", "results.md")]:
        plots = sorted((path.parent / "plots").glob("*.svg")) if path.parent.name else []
        found.append(
            {
                "path": _rel(ws, path),
                "blocks": markdown_blocks(path.read_text(encoding="utf-8")),
                "plots": [web_path(p) for p in plots],
            }
        )
    return found


_ROW = re.compile(r"^\|(.*)\|\s*$")
_RULE = re.compile(r"^\|?\s*:?-{3,}")


def markdown_blocks(text: str) -> list[dict[str, Any]]:
    """Markdown as headings, tables (rows of cells) and paragraphs; enough for result pages."""
    blocks: list[dict[str, Any]] = []
    for chunk in re.split(r"\n\s*\n", text):
        lines = [line for line in chunk.strip().splitlines() if line.strip()]
        if not lines:
            continue
        if all(_ROW.match(line) for line in lines):
            rows = [
                [cell.strip() for cell in _ROW.match(line).group(1).split("|")]  # type: ignore[union-attr]
                for line in lines
                if not _RULE.match(line)
            ]
            blocks.append({"kind": "table", "head": rows[0], "rows": rows[1:]})
        elif lines[0].startswith("#"):
            level = len(lines[0]) - len(lines[0].lstrip("#"))
            blocks.append({"kind": "heading", "level": level, "text": lines[0][level:].strip()})
            if lines[1:]:
                blocks.append({"kind": "text", "text": " ".join(lines[1:])})
        else:
            blocks.append({"kind": "text", "text": " ".join(lines)})
    return blocks


def _rel(ws: Workspace, path: Path) -> str:
    return path.relative_to(ws.root).as_posix()
