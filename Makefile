# Two commands do everything on a fresh machine:
#   make lab   - create .venv if missing, install fitgpp, open the workbook in JupyterLab
#   make test  - create .venv if missing, install fitgpp with test extras, run the whole suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fitgpp-installed
# JupyterLab refuses to run as root without --allow-root; a normal user needs no flag.
ROOTFLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)
PORT   ?= 8888
comma  := ,

.PHONY: lab test bench docs clean

# setuptools' editable build prints an "Editable installation" notice block (about folders named
# like the package shadowing it) on every install, although this layout is what it warns of by
# design; silence that one warning, by its message, and nothing else (tests/test_lab_config.py).
QUIET_EDITABLE := ignore:Editable installation

# $(call install,EXTRAS): create the venv if missing and install fitgpp editable with EXTRAS
define install
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	PYTHONWARNINGS="$(QUIET_EDITABLE)$${PYTHONWARNINGS:+,$$PYTHONWARNINGS}" $(BIN)/python -m pip install -q -e ".[$(1)]"
endef

$(STAMP): pyproject.toml
	$(call install,dev)
	@touch $(STAMP)

# lab-config/ (see its README) makes the printed URL open the quickstart notebook, not the
# Launcher, and turns off JupyterLab's news pop-up and update check; ~/.jupyter still applies.
lab: $(STAMP)
	cd notebooks && JUPYTER_CONFIG_PATH="$(CURDIR)/lab-config$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}" \
		../$(BIN)/jupyter lab --port=$(PORT) $(ROOTFLAG) 00_quickstart.ipynb

test: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_simulator.py

# make docs - create .venv if missing, install fitgpp with dev + docs extras, build the site
# offline with warnings as errors into docs/_build/html, then check no page loads anything
# from the network.
DOCS_STAMP := $(VENV)/.fitgpp-docs-installed
$(DOCS_STAMP): pyproject.toml
	$(call install,dev$(comma)docs)
	@touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(BIN)/python -m sphinx -W --keep-going -E -q -j auto -b html -d docs/_build/doctrees docs docs/_build/html
	$(BIN)/python docs/check_offline.py docs/_build/html

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
