"""``lyra eval``: learning methods side by side on a suite, with the papers' metrics and plots."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``eval`` command."""
    from lyra.llm.cli import add_llm_option
    from lyra.teach_cli import add_ray_option

    parser = subparsers.add_parser(
        "eval",
        help="compare learning methods on a suite of instructions (s, i, n, tokens, cost, plots)",
        description="Run each method on each instruction of a suite, several runs in a row with "
        "what the method kept, and write results.jsonl, results.md and plots to --out.",
    )
    parser.add_argument(
        "suite", nargs="?", help="a suite folder (with suite.yaml) or its YAML file"
    )
    parser.add_argument(
        "--method",
        action="append",
        dest="methods",
        metavar="NAME",
        help="a method to evaluate (repeatable; default lyra); `lyra eval --list` names them",
    )
    add_llm_option(parser)
    parser.add_argument(
        "--teacher",
        choices=("scripted", "llm"),
        default="scripted",
        help="who judges: the suite's scripted corrections (default) or an LLM critic",
    )
    parser.add_argument("--runs", type=int, help="runs per instruction (default: the suite's)")
    parser.add_argument(
        "--split",
        action="append",
        dest="splits",
        help="only these splits (repeatable): seen, unseen_attributes, unseen_instructions",
    )
    parser.add_argument("--template", action="append", dest="templates", help="only these")
    parser.add_argument("--max-rounds", type=int, default=4, help="interactions per run (4)")
    parser.add_argument(
        "--check-seeds",
        default="100:103",
        help="seeds an accepted plan is run on again, A:B (default 100:103; 0 for none)",
    )
    parser.add_argument("--out", default="out/eval", help="results folder (default out/eval)")
    parser.add_argument("--prices", help="a price table (TOML) instead of lyra's")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    add_ray_option(parser)
    parser.add_argument("--list", action="store_true", help="list the installed methods and stop")
    parser.set_defaults(func=_eval)


def _eval(args: argparse.Namespace) -> int:
    from lyra.errors import LyraError
    from lyra.evals.report import PRICES, load_prices, markdown, plot, write_jsonl
    from lyra.evals.run import Job, run_jobs
    from lyra.evals.suite import SPLITS, load_suite
    from lyra.methods import find_method, registered
    from lyra.teach_cli import seed_range
    from lyra.workspace import find_workspace

    if args.list:
        for name, method in registered().items():
            print(f"{name:<20} {method.summary}")
        return 0
    if args.suite is None:
        raise LyraError("name the suite to run, e.g. lyra eval evals/tabletop (or --list)")
    methods = args.methods or ["lyra"]
    for name in methods:
        find_method(name)  # an unknown name stops here, before anything runs
    unknown = sorted(set(args.splits or ()) - set(SPLITS))
    if unknown:
        raise LyraError(f"unknown split {', '.join(unknown)}: use {', '.join(SPLITS)}")
    prices = load_prices(Path(args.prices) if args.prices else PRICES)
    suite = load_suite(Path(args.suite))
    items = [
        item
        for item in suite.items(args.splits or SPLITS)
        if not args.templates or item.template in args.templates
    ]
    if not items:
        raise LyraError("no instruction of the suite matches --split and --template")
    checks = () if args.check_seeds in ("0", "") else tuple(seed_range(args.check_seeds))
    out = Path(args.out).absolute()
    out.mkdir(parents=True, exist_ok=True)
    runs = args.runs or suite.runs
    base = find_workspace().root
    jobs = [
        Job(
            name,
            item,
            runs,
            base,
            out,
            args.llm,
            args.teacher,
            args.max_rounds,
            checks,
            suite.demonstrations,
        )
        for name in methods
        for item in items
    ]
    print(
        f"{suite.name}: {len(methods)} method(s) x {len(items)} instruction(s) x {runs} run(s); "
        f"logs in {out / 'logs'}"
    )

    def done(job: Job, records: list[Any]) -> None:
        won = sum(r.success for r in records)
        print(f"  {job.key}: {won}/{len(records)} accepted")

    records, failed = run_jobs(jobs, workers=args.workers, ray=args.ray, done=done)
    if not records:
        raise LyraError("no sequence ran:\n" + "\n".join(failed))
    write_jsonl(out / "results.jsonl", records)
    models = sorted({r.model for r in records if r.model})
    header = (
        f"Methods: {', '.join(methods)}; runs per instruction: {runs}; teacher: {args.teacher}; "
        f"answered by: {', '.join(models) or 'nobody'}."
    )
    table = markdown(suite.name, records, prices, header)
    (out / "results.md").write_text(table, encoding="utf-8")
    plots = plot(records, out / "plots")
    print(table)
    print(f"results: {out / 'results.jsonl'}, {out / 'results.md'}; plots: {len(plots)} files")
    if failed:
        print(f"{len(failed)} sequence(s) failed and are not in the results:", file=sys.stderr)
        print("\n".join(f"  {line}" for line in failed), file=sys.stderr)
        return 1
    return 0
