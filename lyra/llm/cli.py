"""``lyra llm``: show the LLM settings in effect, and what the logged sessions cost.

Also :func:`add_llm_option`, the ``--llm`` option every command that asks the model shares.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

from lyra.llm.config import SPEC_FORMS, LLMConfig
from lyra.llm.session import format_usage, read_log, usage_summary
from lyra.workspace import find_workspace


def add_llm_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--llm SPEC``; pass ``args.llm`` to :func:`lyra.llm.open_session`."""
    parser.add_argument(
        "--llm",
        metavar="SPEC",
        help=f"which model answers: {SPEC_FORMS} (default: lyra.toml [llm], then $LYRA_LLM)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lyra llm config`` and ``lyra llm usage``."""
    parser = subparsers.add_parser("llm", help="show the LLM settings and session usage")
    parser.add_argument(
        "--workspace", type=Path, help="workspace folder (default: $LYRA_WORKSPACE or the cwd)"
    )
    actions = parser.add_subparsers(dest="llm_command", metavar="ACTION", required=True)
    config = actions.add_parser("config", help="print the LLM settings in effect")
    add_llm_option(config)
    config.set_defaults(func=_config)
    usage = actions.add_parser("usage", help="total calls, tokens and latency per purpose")
    usage.add_argument(
        "logs", nargs="*", type=Path, help="session logs (default: every one in .lyra/sessions)"
    )
    usage.set_defaults(func=_usage)


def _config(args: argparse.Namespace) -> int:
    config = LLMConfig.load(find_workspace(args.workspace).root, spec=args.llm)
    for field in dataclasses.fields(config):
        print(f"{field.name} = {getattr(config, field.name)}")
    key_state = "set" if os.environ.get(config.api_key_env) else "not set"
    print(f"# {config.api_key_env} is {key_state}")
    return 0


def _usage(args: argparse.Namespace) -> int:
    logs = args.logs or sorted(
        (find_workspace(args.workspace).state_dir / "sessions").glob("*.jsonl")
    )
    records = [record for log in logs for record in read_log(log)]
    print(format_usage(usage_summary(records)))
    return 0
