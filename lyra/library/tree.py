"""The skill tree: which skills build on which, as text for the terminal, SVG and HTML.

An edge runs from a skill to each skill it imports. The drawing is layered: skills built only on
primitives sit on the bottom row and every skill sits one row above the highest skill it uses.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from lyra.library.errors import UnknownSkillError
from lyra.library.parse import Library

_CHAR_W = 7.8
_BOX_H = 28
_ROW_H = 90
_GAP = 24
_MARGIN = 20


def runnable(
    calls: Mapping[str, tuple[Sequence[str], Sequence[str]]], lacking: Collection[str]
) -> set[str]:
    """The skills a backend lacking some primitives can still run.

    Args:
        calls: for each skill, (the names it imports from lyra.api, the skills it imports).
        lacking: the primitives the backend does not have.

    Returns:
        The skills that call none of them, directly or through the skills they call (a skill
        calling one that is not in ``calls`` cannot run either).
    """
    unusable = {name for name, (primitives, _) in calls.items() if set(lacking) & set(primitives)}
    while True:
        more = {
            name
            for name, (_, skills) in calls.items()
            if name not in unusable and any(c in unusable or c not in calls for c in skills)
        }
        if not more:
            return set(calls) - unusable
        unusable |= more


@dataclass(frozen=True)
class SkillTree:
    """Callers and callees of every skill in a library.

    Attributes:
        callees: for each skill, the skills it imports (sorted); names missing from the
            library are kept so a broken reference shows.
        callers: for each skill, the skills that import it (sorted).
        primitives: for each skill, the lyra.api names it imports.
        summaries: for each skill, the first line of its docstring.
    """

    callees: Mapping[str, tuple[str, ...]]
    callers: Mapping[str, tuple[str, ...]]
    primitives: Mapping[str, tuple[str, ...]]
    summaries: Mapping[str, str]

    @classmethod
    def of(cls, library: Library) -> SkillTree:
        """Build the tree of a parsed library."""
        callees = {record.name: record.calls_skills for record in library}
        callers: dict[str, list[str]] = {name: [] for name in callees}
        for name, used in callees.items():
            for callee in used:
                callers.setdefault(callee, []).append(name)
        return cls(
            callees=callees,
            callers={name: tuple(sorted(users)) for name, users in callers.items()},
            primitives={record.name: record.calls_primitives for record in library},
            summaries={record.name: record.summary for record in library},
        )

    def reach(self, skills: Iterable[str]) -> set[str]:
        """The skills ``skills`` call, directly or through other skills, and themselves."""
        seen: set[str] = set()
        stack = list(skills)
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                stack.extend(self.callees.get(name, ()))
        return seen

    def roots(self) -> list[str]:
        """Return the skills no other skill uses, sorted."""
        return sorted(name for name in self.callees if not self.callers.get(name))

    def _check(self, name: str) -> None:
        if name not in self.callees:
            raise UnknownSkillError(name, self.callees)

    def render_text(self, name: str | None = None) -> str:
        """Return the tree as indented text, from the given skill (default: every root) down.

        Args:
            name: the skill to start from; its callers are listed on a last line.
        """
        starts = self.roots() if name is None else [name]
        if name is not None:
            self._check(name)
        lines: list[str] = []
        shown: set[str] = set()
        for start in starts:
            lines.append(self._label(start))
            shown.add(start)
            self._render_children(start, "", (start,), shown, lines)
        if name is not None:
            users = self.callers.get(name, ())
            lines.append(f"used by: {', '.join(users) if users else '(no skill)'}")
        if not lines:
            lines.append("(no skills yet)")
        return "\n".join(lines) + "\n"

    def _label(self, name: str) -> str:
        if name not in self.callees:
            return f"{name}  (missing: no module skills/{name}.py)"
        used = self.primitives.get(name, ())
        return f"{name}  [{', '.join(used)}]" if used else name

    def _render_children(
        self, name: str, prefix: str, path: tuple[str, ...], shown: set[str], lines: list[str]
    ) -> None:
        children = self.callees.get(name, ())
        for index, child in enumerate(children):
            last = index == len(children) - 1
            branch, indent = ("└── ", "    ") if last else ("├── ", "│   ")
            if child in path:
                lines.append(f"{prefix}{branch}{child}  (cycle)")
            elif child in shown and self.callees.get(child):
                # A shared subtree is drawn once; later mentions point back to it.
                lines.append(f"{prefix}{branch}{child}  (see above)")
            else:
                lines.append(f"{prefix}{branch}{self._label(child)}")
                shown.add(child)
                self._render_children(child, prefix + indent, (*path, child), shown, lines)

    def layers(self) -> list[list[str]]:
        """Return the skills row by row, top row first, each row ordered to limit crossings."""
        height: dict[str, int] = {}
        for name in self.callees:
            self._height(name, height, ())
        rows: list[list[str]] = [[] for _ in range(max(height.values(), default=-1) + 1)]
        for name in sorted(height):
            rows[height[name]].append(name)
        rows.reverse()
        for upper, row in itertools.pairwise(rows):
            order = {name: i for i, name in enumerate(upper)}
            row.sort(key=lambda n: (self._barycentre(n, order), n))
        return rows

    def _height(self, name: str, height: dict[str, int], path: tuple[str, ...]) -> int:
        if name not in height:
            below = [
                self._height(child, height, (*path, name))
                for child in self.callees.get(name, ())
                if child not in path and child != name
            ]
            height[name] = 1 + max(below, default=-1)
        return height[name]

    def _barycentre(self, name: str, order: Mapping[str, int]) -> float:
        places = [order[user] for user in self.callers.get(name, ()) if user in order]
        return sum(places) / len(places) if places else float(len(order))

    def to_svg(self) -> str:
        """Return the layered drawing as a standalone SVG document."""
        rows = self.layers()
        boxes: dict[str, tuple[float, float, float]] = {}
        width = 2.0 * _MARGIN
        for r, row in enumerate(rows):
            x = float(_MARGIN)
            for name in row:
                w = len(name) * _CHAR_W + 20
                boxes[name] = (x, _MARGIN + r * _ROW_H, w)
                x += w + _GAP
            width = max(width, x - _GAP + _MARGIN)
        height = 2 * _MARGIN + max(len(rows) - 1, 0) * _ROW_H + _BOX_H
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="monospace" font-size="13">',
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
            'markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker>'
            "</defs>",
        ]
        for name, children in self.callees.items():
            for child in children:
                if child in boxes:
                    parts.append(_edge(boxes[name], boxes[child]))
        for name, (x, y, w) in boxes.items():
            parts.append(self._node(name, x, y, w))
        parts.append("</svg>")
        return "\n".join(parts) + "\n"

    def _node(self, name: str, x: float, y: float, w: float) -> str:
        tip = escape(self.summaries.get(name, ""))
        return (
            f'<g><title>{tip}</title><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
            f'height="{_BOX_H}" rx="6" fill="#eef4ff" stroke="#3a6ea5"/>'
            f'<text x="{x + w / 2:.1f}" y="{y + _BOX_H / 2 + 4:.1f}" text-anchor="middle">'
            f"{escape(name)}</text></g>"
        )

    def to_html(self, title: str = "lyra skill tree") -> str:
        """Return one self-contained HTML page showing the SVG drawing and each skill's summary."""
        items = "\n".join(
            f"<li><b>{escape(name)}</b>: {escape(summary)}</li>"
            for name, summary in sorted(self.summaries.items())
        )
        return (
            "<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            "<style>body{font-family:sans-serif;margin:2em}svg{max-width:100%;height:auto}</style>"
            f"</head><body>\n<h1>{escape(title)}</h1>\n{self.to_svg()}<ul>\n{items}\n</ul>\n"
            "</body></html>\n"
        )


def _edge(caller: tuple[float, float, float], callee: tuple[float, float, float]) -> str:
    x1, y1, w1 = caller
    x2, y2, w2 = callee
    return (
        f'<line x1="{x1 + w1 / 2:.1f}" y1="{y1 + _BOX_H:.1f}" x2="{x2 + w2 / 2:.1f}" '
        f'y2="{y2:.1f}" stroke="#555" marker-end="url(#arrow)"/>'
    )
