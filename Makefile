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

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
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
