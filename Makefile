# Two commands for a fresh machine: `make book` (the study on the embedded model, then the book)
# and `make test` (ruff and the whole pytest suite). Everything else is a building block of those.
PYTHON  ?= $(shell command -v python3.11 || command -v python3)
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

MODEL   ?= local
MODELS  ?= $(MODEL)
DATASET ?= easy
LIMIT   ?= 8
VARIANTS ?= options_only none_of_the_above shuffled reason_then_choose

.PHONY: install test book notebooks figures html pdf lab browser clean

# The embedded model's engine, built for any x86-64 CPU with AVX2 (2013 on) rather than for the CPU that
# compiles it: pip's default build uses -march=native, which on a Xeon with AMX compiles in a kernel that
# crashes (llama.cpp issue 20824), and a wheel built so crashes or computes differently on another CPU.
# The wheel is kept in WHEELHOUSE (its flags are in its folder's name, so a native wheel in pip's own cache
# is never taken) and reinstalled over whatever a venv had.
LLAMA_CPP_VERSION := 0.3.36
LLAMA_CMAKE_ARGS  := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
                     -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
WHEELHOUSE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cfa-lib/wheels/llama-cpp-python-$(LLAMA_CPP_VERSION)-portable-avx2
LLAMA_WHEEL = $(BIN)/python -m pip install --quiet --no-deps --force-reinstall --no-index --find-links $(WHEELHOUSE) \
              'llama-cpp-python==$(LLAMA_CPP_VERSION)'

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(LLAMA_WHEEL) 2>/dev/null || { \
	  echo "Building llama-cpp-python $(LLAMA_CPP_VERSION) for any AVX2 CPU (about 9 minutes on 2 cores, once per machine)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel --quiet --no-deps --no-cache-dir \
	    --no-binary llama-cpp-python -w $(WHEELHOUSE) 'llama-cpp-python==$(LLAMA_CPP_VERSION)' && $(LLAMA_WHEEL); }
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

## make test: ruff, then every test (slow end-to-end ones included), one worker per core (pytest-xdist);
## a test file runs on one worker, so a module fixture (the built book, the bad-parameter runs) is made once
test: install browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto --dist loadfile

## make book: run notebooks 01-03 on each of MODELS, then 04, then build the book offline
book: browser notebooks html

notebooks: install
	$(BIN)/python -m cfa_lib.publishing.pipeline --models "$(MODELS)" --dataset "$(DATASET)" --limit "$(LIMIT)" --variants "$(VARIANTS)"

html: install
	$(BIN)/python -m cfa_lib.publishing.build html

## make pdf: the book as one PDF for reviewers (needs Chromium: installed by `make browser`)
pdf: install browser
	$(BIN)/python -m cfa_lib.publishing.build pdf

## make lab: JupyterLab on notebooks/ with the project's environment
lab: install
	$(BIN)/jupyter lab --ServerApp.root_dir=notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

## Debian's Chromium (browser test, PDF) and npm (MathJax served from the book), when missing
browser:
	@missing=""; command -v chromium >/dev/null 2>&1 || missing="chromium"; \
	command -v npm >/dev/null 2>&1 || missing="$$missing npm"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else echo "Missing:$$missing; run 'sudo apt-get install$$missing' for the browser test and make pdf"; fi; fi

clean:
	rm -rf build results .cache
