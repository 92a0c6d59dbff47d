"""The ONNX Runtime backends, for real: exported from the packaged weights, compared with the torch backend.

The suite runs the product's default backend, onnx-int8 (tests/conftest.py): its export is made once per test run in
the suite's user cache, which these tests share (``export_dir``); the torch backend is built here by name."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from memory_samples import COLORECTAL_VERSIONS, PREPRINT, PUBLISHED, RELATED, UNRELATED

from synthesist.composition import open_shared
from synthesist.config import MemorySettings, default_onnx_dir, load_settings
from synthesist.memory import ChromaVectorCache, Embedder, EmbeddingModelError, LibraryIndex, open_chroma
from synthesist.memory.documents import head_text
from synthesist.memory.embeddings import default_model_path
from synthesist.models import Evidence
from synthesist.onnx_encoder import EXPORT_RECIPE, OnnxEncoder, export_path, model_digest, open_export

TEXTS = [
    "Metformin use and colorectal cancer risk in 45,000 adults with type 2 diabetes followed for six years.",
    "aspirin",
    "Beta blockers after myocardial infarction: a cohort of 12,000 patients with reduced ejection fraction, "
    "followed for a median of four years, with all-cause mortality as the primary outcome.",
]


@pytest.fixture(scope="module")
def export_dir() -> Path:
    """The machine's export folder (the suite's user cache): each backend is exported once, by the first use."""
    return default_onnx_dir()


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    """sentence-transformers on torch, the reference the ONNX exports are held to."""
    return Embedder(backend="torch")


@pytest.fixture(scope="module")
def abstracts(library_records: list[Evidence]) -> list[str]:
    """What the library index embeds for 96 real records (every 17th of the shared library)."""
    return [head_text(record) for record in library_records[::17][:96]]


def test_a_texts_int8_vector_does_not_depend_on_the_texts_beside_it(export_dir: Path, abstracts: list[str]) -> None:
    """The int8 graph scales its activations per run: in a batch, a text's vector moved with its company (and the
    vector cached by its content hash was whichever company it first came in). Each text runs alone."""
    alone = np.stack([Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync([text])[0]
                      for text in [*TEXTS, *abstracts[:4]]])
    together = Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync([*TEXTS, *abstracts[:4]])
    assert np.array_equal(alone, together)


def test_a_calls_texts_run_side_by_side_and_get_the_vectors_they_get_one_by_one(
        export_dir: Path, abstracts: list[str]) -> None:
    """The texts of one call run two side by side (``threads`` shared between them): each text's vector is the one it
    gets alone on one thread, bit for bit, in the call's order; and a forked child, whose copy of the pool has no
    threads, makes its own."""
    Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(TEXTS[:1])  # the export is on disk
    graph = export_path(default_model_path(), "onnx-int8", export_dir)
    texts = [*TEXTS, *abstracts[:5]]
    one = OnnxEncoder(graph, default_model_path(), threads=1).encode(texts, 8)
    lanes = OnnxEncoder(graph, default_model_path(), threads=2)
    assert np.array_equal(lanes.encode(texts, 8), one)
    many = OnnxEncoder(graph, default_model_path(), threads=8)  # two lanes of four cores each
    assert many.lanes == 2 and many._session.get_session_options().intra_op_num_threads == 4
    assert np.array_equal(many.encode(texts[:4], 8), one[:4])
    assert np.array_equal(lanes.encode(texts[::-1], 8), one[::-1])
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(writer, lanes.encode(texts[:4], 8).tobytes())
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        if not select.select([pipe], [], [], 120)[0]:  # a child waiting on its parent's threads never writes
            os.kill(child, signal.SIGKILL)
        got = pipe.read()
    os.waitpid(child, 0)
    assert np.array_equal(np.frombuffer(got, dtype=np.float32).reshape(4, -1), one[:4])


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_an_onnx_backend_runs_from_its_export_and_gives_unit_rows_in_order(backend: str, export_dir: Path) -> None:
    embedder = Embedder(backend=backend, export_dir=export_dir)
    vectors = embedder.embed_sync([*TEXTS, TEXTS[0]])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(vectors[0], vectors[3])
    assert embedder.encoded_count == 3 and embedder.dimension == 384
    exported = export_path(default_model_path(), backend, export_dir)
    assert exported.is_file() and exported.name.endswith(f"-{backend}-{EXPORT_RECIPE}.onnx")


def test_the_models_digest_is_kept_beside_its_exports_and_made_again_for_a_changed_model(tmp_path: Path) -> None:
    """Each process that opens the encoder names its export by the model's digest: it is kept in the export folder
    (``digests.json``) under the files' sizes and times instead of hashing 91 MB each time, and a changed file gives a
    new digest, so a stale export is never used."""
    model = tmp_path / "model"
    model.mkdir()
    for name in ("config.json", "model.safetensors", "tokenizer.json", "sentence_bert_config.json"):
        (model / name).symlink_to(default_model_path() / name)
    exports = tmp_path / "exports"
    first = export_path(model, "onnx-int8", exports)
    kept = json.loads((exports / "digests.json").read_text(encoding="utf-8"))
    assert list(kept.values()) == [model_digest(model)] and first.name.startswith(f"model-{model_digest(model)[:16]}-")
    assert export_path(model, "onnx-int8", exports) == first and not list(exports.glob("*.digests"))

    (model / "config.json").unlink()
    (model / "config.json").write_text((default_model_path() / "config.json").read_text() + "\n")
    changed = export_path(model, "onnx-int8", exports)
    assert changed != first and changed.name.startswith(f"model-{model_digest(model)[:16]}-")
    assert len(json.loads((exports / "digests.json").read_text(encoding="utf-8"))) == 2


@pytest.mark.torch
def test_onnx_vectors_agree_with_the_torch_backend_on_real_abstracts(
    torch_embedder: Embedder, export_dir: Path, abstracts: list[str]
) -> None:
    reference = torch_embedder.embed_sync(abstracts)
    fp32 = Embedder(backend="onnx", export_dir=export_dir).embed_sync(abstracts)
    int8 = Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(abstracts)
    fp32_cosine = np.sum(fp32 * reference, axis=1)
    int8_cosine = np.sum(int8 * reference, axis=1)
    # Measured on all 1,671 library texts: fp32 ≥ 0.99999; int8 mean 0.9956, min 0.990.
    assert fp32_cosine.min() > 0.9999
    assert int8_cosine.mean() > 0.993 and int8_cosine.min() > 0.985


def test_a_text_gets_nearly_the_same_int8_vector_alone_or_in_a_batch(export_dir: Path, abstracts: list[str]) -> None:
    texts = [*abstracts[:30], "aspirin"]
    batched = Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(texts)
    alone = np.stack([Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync([text])[0] for text in texts])
    # Dynamic quantisation scales activations per batch; measured min 0.992 on 50 texts. fp32 is exact.
    assert np.sum(batched * alone, axis=1).min() > 0.985


def test_the_int8_backend_keeps_the_similarities_deduplication_relies_on(export_dir: Path) -> None:
    vectors = Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(
        [PREPRINT, PUBLISHED, RELATED, *COLORECTAL_VERSIONS, *UNRELATED]
    )
    similarity = vectors @ vectors.T
    assert similarity[0, 1] >= 0.95  # a preprint and its journal version merge at the 0.9 threshold
    assert 0.5 <= similarity[1, 2] <= 0.85  # the same design with another finding does not
    assert similarity[3:6, 3:6].min() > 0.9
    assert similarity[6:, :6].max() < 0.6


def test_the_int8_backend_keeps_the_library_floors_on_the_dev_questions(
    library_index: LibraryIndex, embedder: Embedder, dev_questions: list[dict[str, str]]
) -> None:
    assert embedder.backend == "onnx-int8"  # the session's index was built by the product's default backend
    hits = library_index.search_many([question["question"] for question in dev_questions], k=10)
    top1 = np.mean([found[0].pmid == q["pmid"] for found, q in zip(hits, dev_questions, strict=True)])
    top10 = np.mean([q["pmid"] in {h.pmid for h in found} for found, q in zip(hits, dev_questions, strict=True)])
    assert top1 >= 0.980  # torch: 0.984; the backend is accepted within 0.4 points
    assert top10 >= 0.99


@pytest.mark.torch
def test_a_changed_backend_never_reuses_the_other_backends_vectors(
    tmp_path: Path, export_dir: Path, library_records: list[Evidence], torch_embedder: Embedder
) -> None:
    records = library_records[:12]
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    name = f"switch-{tmp_path.name}"
    LibraryIndex.build(records, embedder=torch_embedder, client=client, name=name)
    int8 = Embedder(backend="onnx-int8", export_dir=export_dir)
    switched = LibraryIndex.build(records, embedder=int8, client=client, name=name)
    assert (switched.stats.embedded, switched.stats.reused) == (12, 0) and int8.encoded_count == 12
    again = Embedder(backend="onnx-int8", export_dir=export_dir)
    assert LibraryIndex.build(records, embedder=again, client=client, name=name).stats.embedded == 0
    assert again.encoded_count == 0
    assert len({torch_embedder.model_id, int8.model_id, Embedder(backend="onnx", export_dir=export_dir).model_id}) == 3


@pytest.mark.torch
def test_the_embedding_cache_is_kept_per_backend(tmp_path: Path, export_dir: Path) -> None:
    client = open_chroma(load_settings(data_dir=tmp_path / "data"))
    int8_id = Embedder(backend="onnx-int8", export_dir=export_dir).model_id
    writer = Embedder(backend="onnx-int8", export_dir=export_dir, cache=ChromaVectorCache.open(client, int8_id))
    writer.embed_sync(TEXTS)
    reader = Embedder(backend="torch", cache=ChromaVectorCache.open(client, Embedder(backend="torch").model_id))
    reader.embed_sync(TEXTS)
    assert reader.encoded_count == len(TEXTS)  # torch found no vector of its own


def test_an_export_is_keyed_by_the_models_files(tmp_path: Path) -> None:
    model = tmp_path / "model"
    shutil.copytree(default_model_path(), model, ignore=shutil.ignore_patterns("model.safetensors"))
    (model / "model.safetensors").symlink_to(default_model_path() / "model.safetensors")
    before = export_path(model, "onnx-int8", tmp_path)
    assert before == export_path(model, "onnx-int8", tmp_path)
    assert before != export_path(model, "onnx", tmp_path)
    config = model / "config.json"
    config.write_text(config.read_text(encoding="utf-8").replace("}", ', "note": "retrained"}', 1), encoding="utf-8")
    assert export_path(model, "onnx-int8", tmp_path) != before


def test_the_composition_root_builds_the_configured_backend(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data",
                             memory={"chroma_mode": "ephemeral", "embedding_backend": "onnx-int8"})
    embedder = open_shared(settings).embedder
    assert embedder.backend == "onnx-int8" and embedder.model_id == "all-MiniLM-L6-v2-onnx-int8"
    torch = open_shared(load_settings(data_dir=tmp_path / "data", memory={"chroma_mode": "ephemeral",
                                                                          "embedding_backend": "torch"})).embedder
    assert torch.backend == "torch" and torch.model_id == "all-MiniLM-L6-v2"
    assert load_settings(data_dir=tmp_path).memory.embedding_backend == "onnx-int8"  # the suite runs the default
    assert MemorySettings.model_fields["embedding_backend"].default == "onnx-int8" == Embedder().backend


def test_an_onnx_backend_exports_into_the_machines_cache_and_needs_a_model(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert Embedder(backend="onnx-int8").export_pending()  # nothing exported in that cache yet
    assert load_settings().memory.export_dir == tmp_path / "cache" / "synthesist" / "onnx" == default_onnx_dir()
    with pytest.raises(EmbeddingModelError) as caught:
        Embedder(model_path=tmp_path / "no-model", backend="onnx", export_dir=tmp_path).embed_sync(["x"])
    assert caught.value.path == tmp_path / "no-model"


def test_importing_the_backends_imports_no_runtime() -> None:
    code = (
        "import sys, synthesist.memory.embeddings, synthesist.onnx_encoder;"
        "print(','.join(m for m in ('onnxruntime', 'tokenizers', 'onnx', 'torch') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.strip() == ""


def test_the_onnx_thread_budget_follows_omp_num_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    from synthesist.onnx_encoder import cpu_budget

    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # what Ray gives a one-CPU worker
    assert cpu_budget() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert cpu_budget() == len(os.sched_getaffinity(0))
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert cpu_budget() == len(os.sched_getaffinity(0))


def test_a_damaged_export_is_made_again(export_dir: Path, tmp_path: Path) -> None:
    good = export_path(default_model_path(), "onnx", export_dir)
    if not good.is_file():
        Embedder(backend="onnx", export_dir=export_dir).embed_sync(TEXTS[:1])
    damaged = export_path(default_model_path(), "onnx", tmp_path)
    damaged.write_bytes(good.read_bytes()[: good.stat().st_size // 3])  # cut short, as by a full disk
    encoder = open_export(default_model_path(), "onnx", tmp_path)
    assert encoder.encode(TEXTS[:1], 8).shape == (1, 384)
    assert damaged.stat().st_size > good.stat().st_size // 2  # made again, whole
    assert not list(tmp_path.glob("*.partial"))  # written aside, renamed into place (a folder no other test uses)


def test_an_embedder_says_when_loading_will_export_first(export_dir: Path, tmp_path: Path) -> None:
    Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(TEXTS[:1])  # the module's export exists
    assert not Embedder(backend="onnx-int8", export_dir=export_dir).export_pending()
    assert Embedder(backend="onnx-int8", export_dir=tmp_path).export_pending()  # an empty folder
    assert not Embedder(backend="torch").export_pending()


def test_loading_an_export_on_disk_leaves_the_environment_alone(export_dir: Path) -> None:
    """A process's first store open loads the model in a thread while it starts the store's owner process: a change
    of the environment under that start made it fail with EFAULT ("Bad address"). Reading an export that is on
    disk needs no Hugging Face variable, so it sets none (a fresh process: this one has the model loaded)."""
    Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(TEXTS[:1])  # the export is on disk
    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from synthesist.memory import Embedder\n"
        "changed = []\n"
        "real_put, real_unset = os.putenv, os.unsetenv\n"
        "os.putenv = lambda k, v: (changed.append(k), real_put(k, v))[1]\n"
        "os.unsetenv = lambda k: (changed.append(k), real_unset(k))[1]\n"
        f"Embedder(backend='onnx-int8', export_dir=Path({str(export_dir)!r})).preload()\n"
        "print(sorted(set(changed)))\n"
    )
    assert _printed_by_a_fresh_process(code) == "[]"


def _printed_by_a_fresh_process(code: str, env: dict[str, str] | None = None) -> str:
    """What ``code`` prints, run by a new interpreter (which must exit 0)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                          env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_models_a_run_uses_load_while_the_store_opens(export_dir: Path) -> None:
    """A process's first store open (``composition.loading_models``) also reads the reading core's fitted models,
    compiles the prompt templates and imports what httpx's first request on an event loop imports, so a run's first
    question, first prompt and first request do not wait for them (a fresh process: this one has them loaded)."""
    Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(TEXTS[:1])  # the export is on disk
    code = (
        "import sys\n"
        "from synthesist.composition import loading_models\n"
        "from synthesist.config import load_settings\n"
        "from synthesist.memory import embeddings\n"
        "from synthesist.prompts import TEMPLATE_DIR, _environment\n"
        "from synthesist.reading.alignment import _shipped_gate\n"
        "from synthesist.reading.outcome_names import name_model\n"
        "from synthesist.reading.question_parts import question_tagger\n"
        "from synthesist.reading.roles import role_model\n"
        "from synthesist.reading.study_reader import study_reader\n"
        "settings = load_settings()\n"
        "before = 'anyio._backends._asyncio' in sys.modules\n"
        "with loading_models(settings):\n"
        "    pass\n"
        "models = (question_tagger, study_reader, role_model, name_model, _shipped_gate)\n"
        "print([f.cache_info().currsize for f in models], len(embeddings._MODELS),\n"
        "      len(_environment().cache) == len(list(TEMPLATE_DIR.glob('*.j2'))),\n"
        "      before, 'anyio._backends._asyncio' in sys.modules)\n"
    )
    env = {**os.environ, "SYNTHESIST_MEMORY__ONNX_DIR": str(export_dir)}
    assert _printed_by_a_fresh_process(code, env) == "[1, 1, 1, 1, 1] 1 True False True"


def test_a_words_vector_is_its_pieces_in_context_the_same_on_any_thread_count(export_dir: Path) -> None:
    """The question tagger's inputs (``reading/question_parts.word_vectors``): one row per word, the mean of its word
    pieces' last-layer vectors, so a word the tokenizer splits has one row, and the same word reads otherwise in
    another question; a run on four threads gives the one-thread vectors bit for bit (the tagger was fitted on
    them)."""
    Embedder(backend="onnx-int8", export_dir=export_dir).embed_sync(TEXTS[:1])  # the export is on disk
    graph = export_path(default_model_path(), "onnx-int8", export_dir)
    one, two = (OnnxEncoder(graph, default_model_path(), threads=n) for n in (1, 8))
    assert two._session.get_session_options().intra_op_num_threads == 4
    words = ("Does", "etanercept", "preserve", "beta-cell", "function", "?")
    vectors = one.word_vectors(words)
    assert vectors.shape == (6, one.dimension) and np.all(np.abs(vectors).sum(axis=1) > 0)
    assert np.array_equal(two.word_vectors(words), vectors)
    other = one.word_vectors(("Is", "kidney", "function", "preserved", "?"))
    assert not np.allclose(other[2], vectors[4], atol=1e-3)  # "function" of the kidney, of the beta cells
