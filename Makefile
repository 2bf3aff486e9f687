# Every target creates and uses .venv itself, so `make demo` / `make test` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

demo: $(STAMP)
	$(BIN)/l3fwd-sim run pcaps -o demo-out/multi --pipeline multi
	$(BIN)/l3fwd-sim run pcaps -o demo-out/simple --pipeline simple
	@echo "outputs: demo-out/multi/port<N>.pcap, demo-out/simple/port<N>.pcap (+ stats.json)"

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_run.py --lookup lpm em fib

clean:
	rm -rf $(VENV) demo-out bench-out .pytest_cache .hypothesis
