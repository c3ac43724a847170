"""The int8-arithmetic copy of the embedding model (index/int8_model.py), with the real model.

The copy is derived from the installed model file and must embed as the shipped graph
does; it is written once, refused for good when it disagrees, and never used where the
CPU has no integer kernel worth using (`int8_model.kernel` is "") or the user turned it
off. Each test asserts what holds on the CPU it runs on: int8 weights with VNNI, uint8
ones with AVX2 alone, or no copy at all.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_enhancement.index import embedder as embedding
from memory_enhancement.index import int8_model

pytestmark = pytest.mark.semantic

TEXTS = [
    "A car is parked in the garage.",
    "automobile",
    "Pasta is served on Fridays.",
    "The on-call engineer answers pages within fifteen minutes, day and night, "
    "and hands over to the next one with notes on what is still open.",
    "修正したテストがヘッドレス環境でハングする",
]


def shipped() -> Path:
    return embedding.Embedder()._files()[0]


def test_the_kernel_follows_the_cpu() -> None:
    vnni = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n"
    avx_vnni = "flags\t\t: fpu sse2 avx2 avx_vnni\n"
    avx2 = "flags\t\t: fpu sse2 avx2 avx512f avx512bw\n"  # AVX-512 without VNNI: 16-bit pairs
    older = "flags\t\t: fpu sse2 sse4_2 avx\n"
    assert int8_model.kernel(vnni) == int8_model.kernel(avx_vnni) == int8_model.SIGNED
    assert int8_model.kernel(avx2) == int8_model.OFFSET
    assert int8_model.kernel(older) == int8_model.kernel("") == ""


def here() -> str:
    """The kernel this CPU's copy is written for (SIGNED where it gets none: the tests still
    derive one to check its form)."""
    return int8_model.kernel() or int8_model.SIGNED


@pytest.mark.parametrize("product", [int8_model.SIGNED, int8_model.OFFSET])
def test_the_copy_multiplies_integers(tmp_path: Path, product: str) -> None:
    import onnx
    import onnxruntime

    target = tmp_path / "copy.onnx"
    assert int8_model.write(shipped(), target, lambda _: True, tmp_path / "no", product)
    # Products are integer, not float: the graph multiplies with MatMulIntegerToFloat only,
    # its weights int8 for the SIGNED kernel and uint8 around 128 for the OFFSET one.
    graph = onnx.load(str(target)).graph
    kinds = {node.op_type for node in graph.node}
    assert "MatMulIntegerToFloat" in kinds and "MatMul" not in kinds
    # (Six layers of four products, the query, key and value ones as one; the embedding
    # tables are looked up, not multiplied, and stay int8.)
    weights = {w.name: w.data_type for w in graph.initializer if w.name.endswith(".q")}
    products = {name: kind for name, kind in weights.items() if ".layer." in name}
    wanted = onnx.TensorProto.INT8 if product == int8_model.SIGNED else onnx.TensorProto.UINT8
    assert len(products) == 24 and set(products.values()) == {wanted}
    assert onnxruntime.InferenceSession(str(target)).get_outputs()[0].name == "last_hidden_state"


def test_the_copy_embeds_as_the_shipped_graph_does(tmp_path: Path) -> None:
    import numpy as np

    model = embedding.Embedder()
    if not int8_model.kernel():  # a CPU the copy is not for: the shipped graph embeds
        assert model._int8 is None
        return
    target = tmp_path / "copy.onnx"
    assert int8_model.write(shipped(), target, lambda _: True, tmp_path / "no", here())
    encodings = model._tokenizer.encode_batch(TEXTS)
    ours = model._run(model._session(target, optimised=True), encodings)
    theirs = model._run(model._session(shipped(), optimised=False), encodings)
    assert np.min(np.sum(ours * theirs, axis=1)) > 0.998
    # Same neighbours: what is closest to "automobile" stays closest.
    nearest = [np.argsort(-(v @ v[1]))[:3].tolist() for v in (ours, theirs)]
    assert nearest[0] == nearest[1]


def test_the_embedder_derives_the_copy_once_and_keeps_it(isolated_home: Path) -> None:
    first = embedding.Embedder()
    vector = first.encode(["A car is parked in the garage."])
    models = isolated_home / "cache" / "models"
    if not int8_model.kernel():  # a CPU the copy is not for: none is derived
        assert first._int8 is None and not list(models.glob("*.onnx"))
        return
    assert first._int8 is not None
    (copy,) = models.glob("*.onnx")
    assert copy == int8_model.cached_path(shipped(), models, int8_model.kernel())
    written = copy.stat().st_mtime_ns
    second = embedding.Embedder()
    again = second.encode(["A car is parked in the garage."])
    assert second._int8 is not None and copy.stat().st_mtime_ns == written
    assert float(vector[0] @ again[0]) > 0.9999


def test_a_refused_copy_is_not_derived_again(isolated_home: Path) -> None:
    source = shipped()
    folder = isolated_home / "cache" / "models"
    target = int8_model.cached_path(source, folder, here())
    refused = target.with_suffix(".refused")
    assert not int8_model.write(source, target, lambda _: False, refused, here())
    assert refused.exists() and not target.exists()
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp.onnx")]
    model = embedding.Embedder()
    assert model._int8 is None  # the shipped graph, and no second try
    assert model.encode(["automobile"]).shape == (1, 384)
    assert not target.exists()


def test_a_damaged_copy_is_dropped_and_derived_again(isolated_home: Path) -> None:
    target = int8_model.cached_path(shipped(), isolated_home / "cache" / "models", here())
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not a model")
    damaged = embedding.Embedder()
    assert damaged._int8 is None
    assert damaged.encode(["automobile"]).shape == (1, 384)
    if not int8_model.kernel():  # a CPU the copy is not for: the file is never looked at
        assert target.read_bytes() == b"not a model"
        return
    assert not target.exists()
    assert embedding.Embedder()._int8 is not None and target.exists()


def test_turned_off_or_unwritable_it_falls_back_to_the_shipped_graph(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(embedding.INT8_ENV, "0")
    assert embedding.Embedder()._int8 is None
    monkeypatch.delenv(embedding.INT8_ENV)
    isolated_home.mkdir(parents=True, exist_ok=True)
    (isolated_home / "cache").write_text("a file where the cache folder would be")
    model = embedding.Embedder()
    assert model._int8 is None
    assert model.encode(["automobile"]).shape == (1, 384)


def test_another_model_folder_is_run_as_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    os.symlink(shipped(), folder / "model.onnx")
    os.symlink(embedding._TOKENIZER, folder / "tokenizer.json")
    model = embedding.Embedder(str(folder))
    assert model._int8 is None
    assert model.encode(["automobile"]).shape == (1, 384)
