# Two entry points do all set-up: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
# The CPU build of torch is pinned here (the package itself asks for a range).
TORCH_PIN ?= torch==2.13.0
# The package's extras installed into .venv: `make test EXTRAS=dev,ray` adds Ray (and runs the
# Ray backend's tests, which skip without it).
EXTRAS ?= dev
# One stamp per set of extras, so that asking for other extras installs them.
STAMP := $(VENV)/.installed-$(EXTRAS)

.PHONY: demo test lint venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q $(TORCH_PIN)
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/ascsim demo

test: $(STAMP)
	$(PY) -m pytest -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check ascsim tests examples benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
