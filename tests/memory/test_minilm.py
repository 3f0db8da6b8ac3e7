"""The numpy MiniLM against sentence-transformers' own vectors, and its failure message."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lyra.memory import minilm
from lyra.memory.errors import EmbedderUnavailableError

DATA = Path(__file__).parent / "data"


def test_vectors_match_the_sentence_transformers_reference(minilm_model: minilm.MiniLMEmbedder):
    # The reference rows were computed once with torch + sentence-transformers on the same weights.
    texts = json.loads((DATA / "minilm_reference.json").read_text())
    reference = np.load(DATA / "minilm_reference.npy")
    vectors = minilm_model.embed(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    assert (vectors * reference).sum(axis=1).min() >= 0.9999


def test_a_text_gets_the_same_vector_to_the_bit_whatever_it_is_embedded_with(
    minilm_model: minilm.MiniLMEmbedder,
):
    texts = ["stack", "build a wall of eight blocks in two courses along the table edge", "go"]
    together = minilm_model.embed(texts)
    alone = np.concatenate([minilm_model.embed([text]) for text in texts])
    assert together.tobytes() == alone.tobytes()
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)


def test_no_texts_give_an_empty_array(minilm_model: minilm.MiniLMEmbedder):
    assert minilm_model.embed([]).shape == (0, 384)


def test_missing_weights_say_how_to_install_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LYRA_MINILM_DIR", str(tmp_path))
    assert not minilm.available()
    with pytest.raises(EmbedderUnavailableError) as error:
        minilm.MiniLMEmbedder()
    assert str(error.value) == f"no model.safetensors in {tmp_path}: {minilm.INSTALL_HINT}"
