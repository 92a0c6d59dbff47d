# Synthesist — `make run QUERY="..."` and `make test` work on a fresh machine with Python 3.11.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
# torch must come first and from a CPU build; otherwise a dependency pulls a multi-GB CUDA wheel.
TORCH_VERSION ?= 2.13.0
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
QUERY ?= Does metformin lower cancer incidence in type 2 diabetes?
ARGS ?=
STAMP := $(VENV)/.installed
SHARED ?= ../shared

.PHONY: install run test bench eval clean browser train-reader train-tested train-own train-tagger train-roles train-arms train-names train-counts check-fitted

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	# torch first: a CPU wheel already on this machine (pip's find-links) is taken as is, its dependencies left to uv
	# below; otherwise PyTorch's CPU index, with them.
	$(BIN)/python -m pip install --quiet --no-index --no-deps "torch==$(TORCH_VERSION)" 2>/dev/null || \
	  $(BIN)/python -m pip install --quiet --extra-index-url $(TORCH_INDEX) "torch==$(TORCH_VERSION)"
	# The rest through uv (itself from PyPI, in seconds): it downloads and installs in parallel and keeps the torch
	# above, where pip took about 2.5 minutes for the same 152 packages at the same versions (2026-12-03). Compiled to
	# bytecode as pip does: where PYTHONDONTWRITEBYTECODE is set, every process would compile each import anew.
	$(BIN)/python -m pip install --quiet uv
	$(BIN)/uv pip install --quiet --compile-bytecode --python $(BIN)/python -e ".[test,cxr]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/synthesist research "$(QUERY)" $(ARGS)

# Four workers (pytest-xdist) on two cores: many tests wait on servers, processes and timeouts, and the other
# workers work meanwhile (from a fresh clone with one core busy, 9 min 24 s of pytest with four against 10 min 28 s
# with three, 2026-12-03; two took 11-14 min idle where three took 9 min 20 s); each worker has its own Chroma server
# and library index (the library's vectors embedded once per run) and all share one user cache (tests/conftest.py).
# A module's tests stay on one worker (--dist loadscope), so a module's fixture (test_report_shape's research runs)
# runs once; modules go out in collection order (--no-loadscope-reorder), which starts the longest first
# (tests/suite_order.py). The install and Chromium's (apt) go side by side: on a fresh machine each takes under a
# minute.
TEST_WORKERS ?= 4
# The package's own modules compiled first: where PYTHONDONTWRITEBYTECODE is set (as here), each of the suite's
# processes compiled them again, about 70 s of CPU in all (py-spy, 2026-12-03). And pytest runs with bytecode
# writing on, so that the test modules pytest rewrites are kept (tests/**/__pycache__): every worker collects every
# module, and each rewrote all of them, 6 of its 17 s of collection. The tests import the heavy optional libraries
# (torch, transformers, Ray, the providers' SDKs) where they use them, not at collection: 4.4 s a worker in all.
test:
	@$(MAKE) --no-print-directory -j2 $(STAMP) browser
	$(BIN)/python -m compileall -q src
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=25

# The page's tests drive Debian's Chromium (never a downloaded browser). Installed when we are root with apt-get;
# otherwise those tests skip and say why.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian's chromium for the browser tests (about 30 s)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: the browser tests will skip"; \
	  else \
	    echo "chromium is not installed and cannot be here (not root, or no apt-get): the browser tests will skip"; \
	  fi; \
	fi

# The study reader's heads (src/synthesist/reading/fitted/study_reader/): the ranker, direction and address models
# (model.json) from Evidence Inference 2.0 in ../shared, about nine minutes on two cores, and the conclusion head
# (conclusion.json) from PubMedQA's dev questions, seconds; the same files every time.
train-reader: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python bench/train_study_reader.py
	$(FIT) bench/fit_answer_model.py $(SHARED)/corpus/questions_dev.jsonl $(SHARED)/corpus/library.jsonl

# The study reader's tested-comparison head (fitted/study_reader/tested.json) from Evidence Inference 2.0's train
# prompts in ../shared, about a minute; after train-reader or train-roles, whose files it reads.
train-tested: $(STAMP)
	$(FIT) bench/train_tested_comparison.py

# The least share of its intervention's name a trial that tested it holds in its own text
# (fitted/study_reader/own_text.json) from Evidence Inference 2.0's train prompts in ../shared, about a minute.
train-own: $(STAMP)
	$(FIT) bench/fit_own_text_share.py

train-tagger: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python bench/train_question_tagger.py

train-roles: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python bench/train_sentence_roles.py

# The arm tagger (fitted/arm_tagger/) from the hand-labelled allocation sentences of bench/data/record_arms.jsonl and
# Evidence Inference's articles in ../shared, about a minute and a half.
train-arms: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python bench/train_arm_tagger.py

train-names: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python bench/train_outcome_names.py

# The record's count reader (fitted/record_counts/) from the hand-labelled train trials of bench/data/record_counts.jsonl
# and Evidence Inference's articles in ../shared (two heads: randomised and analysed), about two and a half minutes.
train-counts: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python bench/train_record_counts.py

# Whether each fitted file the package ships is, byte for byte (the answer model: to 1e-4; the alignment gate: or no
# worse on this machine's cosines, which move a little between machines), what its trainer makes from the code and
# ../shared as they are, in the arithmetic every trainer pins (bench/_shared.PINNED); writes nothing, fails on the
# first that is not (14 minutes on two cores on 2026-12-04, three more where the library's index is built first).
# Not part of `make test`: the study reader alone takes nine (its cross-validation included, since 39c6e1d).
# `make test` does check, in a second, that no model was fitted on another since refitted
# (tests/reading/test_fitted_inputs.py, from the records in fitted/inputs.json).
FIT = SYNTHESIST_SHARED=$(abspath $(SHARED)) OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python
check-fitted: $(STAMP)
	$(FIT) bench/fit_answer_model.py $(SHARED)/corpus/questions_dev.jsonl $(SHARED)/corpus/library.jsonl --check
	$(FIT) bench/train_question_tagger.py --check
	$(FIT) bench/train_arm_tagger.py --check
	$(FIT) bench/train_sentence_roles.py --check
	$(FIT) bench/train_outcome_names.py --check
	$(FIT) bench/train_record_counts.py --check
	$(FIT) bench/train_study_reader.py --check
	$(FIT) bench/train_tested_comparison.py --check
	$(FIT) bench/fit_own_text_share.py --check
	$(FIT) bench/fit_alignment_gate.py $(SHARED)/corpus/questions_dev.jsonl $(SHARED)/corpus/library.jsonl --check

bench: $(STAMP)
	$(BIN)/python bench/memory_bench.py
	$(BIN)/python bench/e2e_bench.py

# PubMedQA's 500 dev questions over ../shared's library, out of fold (bench/evaluation.py; about 20 minutes).
eval: $(STAMP)
	$(BIN)/python bench/evaluation.py $(SHARED)/corpus/questions_dev.jsonl --library $(SHARED)/corpus/library.jsonl \
	  --concurrency 2 --out eval-out $(ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache
