"""The papers' metrics from run records, the price table, and the Markdown table."""

from __future__ import annotations

from pathlib import Path

import pytest

from lyra.errors import LyraError
from lyra.evals.report import Price, cost, curves, load_prices, markdown, summarise
from lyra.evals.run import RunRecord, sequence_llm


def record(method: str, split: str, run: int, success: bool, rounds: int, **fields) -> RunRecord:
    return RunRecord(
        method=method,
        template="t",
        split=split,
        instruction="put the red block on the blue block",
        task=f"t-{split}",
        run=run,
        success=success,
        first_try=success and rounds == 1,
        interactions=rounds,
        llm_calls=rounds,
        prompt_tokens=1000 * rounds,
        completion_tokens=100 * rounds,
        wall_seconds=1.0,
        **{"model": "gpt-4o", **fields},
    )


RECORDS = [
    record("lyra", "seen", 1, True, 3),
    record("lyra", "seen", 2, True, 1),
    record("lyra", "seen", 3, False, 4),
    record("cap", "seen", 1, False, 1),
    record("cap", "seen", 2, True, 1),
    record("cap", "seen", 3, True, 1),
]


def test_s_i_n_and_the_cost_of_a_method_on_a_split() -> None:
    prices = {"gpt-4o": Price(2.5, 10.0)}
    lyra, cap = sorted(summarise(RECORDS, prices, "seen"), key=lambda row: row.method != "lyra")
    assert (lyra.s, lyra.i, lyra.n) == (2 / 3, 1 / 3, 2.0)  # n over the runs that succeeded
    assert (cap.s, cap.i, cap.n) == (2 / 3, 2 / 3, 1.0)
    # 8,000 prompt and 800 completion tokens over three runs at $2.50 and $10 per million.
    assert lyra.cost == pytest.approx((8000 * 2.5 + 800 * 10.0) / 1e6 / 3)
    assert cost(record("x", "seen", 1, True, 1, model="unpriced"), prices) is None


def test_learning_curves_give_i_and_n_over_the_x_th_run() -> None:
    assert curves(RECORDS)["lyra"] == [(1, 0.0, 3.0), (2, 1.0, 1.0), (3, 0.0, None)]


def test_the_table_marks_what_is_not_known() -> None:
    text = markdown("demo", RECORDS, {}, "Methods: cap, lyra.")
    assert "| cap | seen | 1 | 3 | 0.67 | 0.67 | 1.00 | 1.0 | 1,000 | 100 | n/a | - |" in text
    assert "| lyra | 3 | 0.00 | - |" in text


def test_a_price_table_without_a_number_names_the_file_and_the_model(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('["my-model"]\nprompt = 1.0\n')
    with pytest.raises(LyraError) as error:
        load_prices(path)
    assert str(error.value) == (
        f"{path}: [my-model] needs `prompt` and `completion`, US dollars per million tokens, "
        "e.g. prompt = 2.5"
    )
    assert load_prices()["gpt-4o"] == Price(2.5, 10.0)


def test_a_manual_or_replay_folder_is_split_per_sequence(tmp_path: Path) -> None:
    assert sequence_llm(f"manual:{tmp_path}", "cap/t-1") == f"manual:{tmp_path}/cap/t-1"
    assert sequence_llm(f"replay:{tmp_path}", "cap/t-1") == f"replay:{tmp_path}/cap/t-1.jsonl"
    assert sequence_llm(f"replay:{tmp_path}/one.jsonl", "cap/t-1") == f"replay:{tmp_path}/one.jsonl"
    assert sequence_llm("openai:gpt-4o", "cap/t-1") == "openai:gpt-4o"
    assert sequence_llm(None, "cap/t-1") is None
