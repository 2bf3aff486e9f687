# Every target creates and uses .venv itself, so `make demo` / `make test` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test test-dpdk fuzz bench clean bytecode screenshot

$(STAMP): pyproject.toml setup.py $(wildcard l3fwd_sim/*.[ch] l3fwd_sim/*/*.[ch])
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	@# builds the compiled twins (setup.py: one C extension); without a C compiler the numpy stages run
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/python -c "from l3fwd_sim import compiled; print('compiled twins:', 'built' if compiled.extension() else 'not built (numpy stages)')"
	touch $@

# Byte-code written ahead: where PYTHONDONTWRITEBYTECODE is set (as on the project's
# machines) every command would otherwise compile the sources it imports (~0.2 s).
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q l3fwd_sim

demo: bytecode
	$(BIN)/l3fwd-sim run pcaps -o demo-out/multi --pipeline multi
	$(BIN)/l3fwd-sim run pcaps -o demo-out/simple --pipeline simple
	@echo "outputs: demo-out/multi/port<N>.pcap, demo-out/simple/port<N>.pcap (+ stats.json)"
	@echo
	@echo "== where DPDK's two paths diverge (path_differences.md); compare exits 1 = they differ =="
	@echo "-- lpm: simple drops non-IP frames, multi sends them back out of their input port (D1)"
	$(BIN)/l3fwd-sim compare demo-out/simple demo-out/multi --by-layers --max-diffs 2; test $$? -eq 1
	$(BIN)/l3fwd-sim run pcaps -o demo-out/em-simple --lookup em --pipeline simple --quiet
	$(BIN)/l3fwd-sim run pcaps -o demo-out/em-multi --lookup em --pipeline multi --quiet
	@echo "-- em: simple also drops ICMP and other non-TCP/UDP (D2), IPv4 options (D3), IPv6 extension headers (D4)"
	$(BIN)/l3fwd-sim compare demo-out/em-simple demo-out/em-multi --by-layers --max-diffs 2; test $$? -eq 1

test: bytecode
	@# over every core (pytest-xdist), a test file per worker: module fixtures are built once
	$(BIN)/python -m pytest -q -rs -n auto --dist loadfile

# the simulator against a live real DPDK (Debian's 22.11: apt-get install dpdk dpdk-dev libdpdk-dev
# dpdk-doc pkg-config), VERIFY_ROUNDS rounds of generated traffic and rule files (l3fwd-sim verify --fuzz)
VERIFY_ROUNDS ?= 200
test-dpdk: bytecode
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/verify
	$(BIN)/l3fwd-sim verify --fuzz $(VERIFY_ROUNDS) --seed 1 --keep verify-out --binary "$$(bash tests/dpdk/build-l3fwd-22.11.sh build/dpdk-22.11)"

# the fuzz suite (tests/fuzz) for FUZZ_SECONDS in all, shared among its targets, from fresh
# random seeds; make test runs the same targets on a fixed set of cases (tests/support/fuzzing.py)
FUZZ_SECONDS ?= 600
fuzz: bytecode
	FUZZ_SECONDS=$(FUZZ_SECONDS) $(BIN)/python -m pytest -q -x -p no:cacheprovider tests/fuzz

bench: bytecode
	$(BIN)/l3fwd-sim bench -o bench-out

# docs/report.png: a run's report.html as headless Chromium draws it (docs/report.md)
screenshot: bytecode
	$(BIN)/python tests/support/browser.py docs/report.png

clean:
	rm -rf $(VENV) demo-out bench-out verify-out build/dpdk-22.11 build/cffi .pytest_cache .hypothesis
