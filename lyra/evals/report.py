"""What a suite's runs amount to: the papers' metrics per method and split, tables and plots.

s is the share of runs the teacher accepted within the interaction limit, i the share accepted
at once (no correction), n the mean interactions of the runs that succeeded; the learning
curves give i and n over the x-th run of each instruction. Costs come from a price table a user
edits (``lyra/evals/prices.toml`` by default), by the model a session log names.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

from lyra.errors import LyraError
from lyra.evals.run import RunRecord
from lyra.evals.suite import SPLITS

PRICES = Path(__file__).with_name("prices.toml")


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    prompt: float
    completion: float


def load_prices(path: Path = PRICES) -> dict[str, Price]:
    """The price table: ``[MODEL]`` tables with ``prompt`` and ``completion`` per million tokens.

    Raises:
        LyraError: the file is not valid TOML or a model's entry lacks a number; the message
            names the file and the model.
    """
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise LyraError(f"cannot read the price table {path}: {error}") from None
    prices = {}
    for model, entry in table.items():
        try:
            prices[model] = Price(float(entry["prompt"]), float(entry["completion"]))
        except (TypeError, KeyError, ValueError):
            raise LyraError(
                f"{path}: [{model}] needs `prompt` and `completion`, US dollars per million "
                "tokens, e.g. prompt = 2.5"
            ) from None
    return prices


def cost(record: RunRecord, prices: Mapping[str, Price]) -> float | None:
    """What a run's tokens cost, in US dollars; None when the model has no price."""
    price = prices.get(record.model)
    if price is None:
        return None
    return (record.prompt_tokens * price.prompt + record.completion_tokens * price.completion) / 1e6


@dataclass(frozen=True)
class Row:
    """A method on one split (or over all of them): its runs summed up."""

    method: str
    split: str
    instructions: int
    runs: int
    s: float
    i: float
    n: float | None
    llm_calls: float
    prompt_tokens: float
    completion_tokens: float
    cost: float | None
    held_out: float | None


def summarise(
    records: Sequence[RunRecord], prices: Mapping[str, Price], split: str | None = None
) -> list[Row]:
    """One row per method, over the runs of ``split`` (None: every split)."""
    rows = []
    for method in sorted({r.method for r in records}):
        runs = [r for r in records if r.method == method and split in (None, r.split)]
        if not runs:
            continue
        won = [r for r in runs if r.success]
        costs = [cost(r, prices) for r in runs]
        checked = [r for r in won if r.check_seeds]
        rows.append(
            Row(
                method=method,
                split=split or "all",
                instructions=len({r.task for r in runs}),
                runs=len(runs),
                s=len(won) / len(runs),
                i=sum(r.first_try for r in runs) / len(runs),
                n=mean(r.interactions for r in won) if won else None,
                llm_calls=mean(r.llm_calls for r in runs),
                prompt_tokens=mean(r.prompt_tokens for r in runs),
                completion_tokens=mean(r.completion_tokens for r in runs),
                cost=None if None in costs else mean(c for c in costs if c is not None),
                held_out=(
                    sum(r.held_out or 0 for r in checked) / sum(r.check_seeds for r in checked)
                    if checked
                    else None
                ),
            )
        )
    return rows


def curves(records: Sequence[RunRecord]) -> dict[str, list[tuple[int, float, float | None]]]:
    """Per method: (x, i, n) over the x-th run of every instruction."""
    result = {}
    for method in sorted({r.method for r in records}):
        points = []
        for x in sorted({r.run for r in records if r.method == method}):
            runs = [r for r in records if r.method == method and r.run == x]
            won = [r.interactions for r in runs if r.success]
            points.append(
                (x, sum(r.first_try for r in runs) / len(runs), mean(won) if won else None)
            )
        result[method] = points
    return result


def markdown(
    suite: str, records: Sequence[RunRecord], prices: Mapping[str, Price], header: str = ""
) -> str:
    """The results as Markdown: per split, over all splits, and the learning curves."""
    lines = [f"# lyra eval: {suite}", ""]
    if header:
        lines += [header, ""]
    lines += [
        "| method | split | instructions | runs | s | i | n | LLM calls | prompt tokens "
        "| completion tokens | cost (USD) | held-out seeds |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    splits = [s for s in SPLITS if any(r.split == s for r in records)]
    for split in [*splits, None]:
        for row in summarise(records, prices, split):
            lines.append(
                f"| {row.method} | {row.split} | {row.instructions} | {row.runs} "
                f"| {row.s:.2f} | {row.i:.2f} | {_n(row.n)} | {row.llm_calls:.1f} "
                f"| {row.prompt_tokens:,.0f} | {row.completion_tokens:,.0f} "
                f"| {_money(row.cost)} | {_share(row.held_out)} |"
            )
    lines += ["", "Learning curves: i and n over the x-th run of each instruction.", ""]
    lines += ["| method | run | i | n |", "|---|---:|---:|---:|"]
    for method, points in curves(records).items():
        lines += [f"| {method} | {x} | {i:.2f} | {_n(n)} |" for x, i, n in points]
    lines.append("")
    return "\n".join(lines)


def _n(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def write_jsonl(path: Path, records: Iterable[RunRecord]) -> None:
    """One JSON object per run."""
    path.write_text(
        "".join(json.dumps(r.to_json(), sort_keys=True) + "\n" for r in records), encoding="utf-8"
    )


def read_jsonl(path: Path) -> list[RunRecord]:
    """The records a ``results.jsonl`` holds."""
    return [
        RunRecord(**json.loads(line))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def plot(records: Sequence[RunRecord], folder: Path) -> list[Path]:
    """s, i and n per method and split; the learning curves; tokens per round. PNG and SVG."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server or in CI
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    methods = sorted({r.method for r in records})
    splits = [s for s in SPLITS if any(r.split == s for r in records)]
    written = []

    figure, axes = plt.subplots(1, 3, figsize=(13, 4))
    width = 0.8 / max(1, len(methods))
    for k, method in enumerate(methods):
        rows = {
            s: row
            for s in splits
            for row in summarise([r for r in records if r.method == method], {}, s)
        }
        xs = [j + k * width for j in range(len(splits))]
        axes[0].bar(xs, [rows[s].s for s in splits], width, label=method)
        axes[1].bar(xs, [rows[s].i for s in splits], width, label=method)
        axes[2].bar(xs, [rows[s].n or 0.0 for s in splits], width, label=method)
    for axis, title in zip(
        axes, ("s: success", "i: success with no correction", "n: interactions"), strict=True
    ):
        axis.set_title(title)
        axis.set_xticks([j + 0.4 - width / 2 for j in range(len(splits))], splits, fontsize=8)
    axes[0].legend(fontsize=8)
    written += _save(figure, folder / "metrics")

    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for method, points in curves(records).items():
        axes[0].plot([x for x, _, _ in points], [i for _, i, _ in points], marker="o", label=method)
        axes[1].plot(
            [x for x, _, n in points if n is not None],
            [n for _, _, n in points if n is not None],
            marker="o",
            label=method,
        )
    axes[0].set_title("i over the x-th run")
    axes[1].set_title("n over the x-th run")
    numbers = sorted({r.run for r in records})
    for axis in axes:
        axis.set_xlabel("run of the instruction")
        axis.set_xticks(numbers)
    axes[0].legend(fontsize=8)
    written += _save(figure, folder / "curves")

    figure, axis = plt.subplots(figsize=(6, 4))
    for k, method in enumerate(methods):
        runs = [r for r in records if r.method == method]
        rounds = sum(r.interactions for r in runs) or 1
        prompt = sum(r.prompt_tokens for r in runs) / rounds
        completion = sum(r.completion_tokens for r in runs) / rounds
        axis.bar(k, prompt, label="prompt" if k == 0 else None, color="tab:blue")
        axis.bar(
            k, completion, bottom=prompt, label="completion" if k == 0 else None, color="tab:orange"
        )
    axis.set_xticks(range(len(methods)), methods, fontsize=8)
    axis.set_title("tokens per round")
    axis.legend(fontsize=8)
    written += _save(figure, folder / "tokens")
    return written


def _save(figure: object, stem: Path) -> list[Path]:
    import matplotlib.pyplot as plt

    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    for path in paths:
        figure.savefig(path, bbox_inches="tight")  # type: ignore[attr-defined]
    plt.close(figure)  # type: ignore[arg-type]
    return paths
