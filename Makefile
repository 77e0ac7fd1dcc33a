# One entry point for people and CI alike: `make test` builds .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test lint typecheck install clean run chaos test-under-load

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy workflows activities gateway seawall bench scripts worker.py

test: lint typecheck
	$(BIN)/pytest

# The whole stack on the embedded default: Temporal dev server + UI, worker, gateway.
run: $(STAMP)
	$(BIN)/seawall up

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# Benchmarks: loop-stopping quality of both loop profiles against peer rules (with the
# thresholds' sensitivity), the cost of durability, and live streaming (delta latency,
# events per second, history per prompt, against polling and workflow_streams), throughput
# against worker count, and the capacity plan computed from those figures (docs/capacity.md).
# Prints the tables and writes bench/results/{loops,overhead,streaming,scaling}.json.
.PHONY: bench
bench: $(STAMP)
	$(BIN)/python bench/loops.py --sensitivity
	$(BIN)/python bench/overhead.py
	$(BIN)/python bench/streaming.py
	$(BIN)/python bench/scaling.py
	$(BIN)/python bench/capacity.py

# Prompts through the gateway while workers are SIGKILLed, the server restarts, MCP servers
# are SIGKILLed mid-call and the model endpoint fails (429, 500, hangs, malformed chunks,
# cut streams), each checked against its undisturbed run (scripts/chaos.py); prints its
# figures. A prompt that misses its deadline (--prompt-deadline) fails the run naming it, and
# a failed run keeps the stack's logs in .data/chaos-logs/ (scripts/chaos_watch.py).
chaos: $(STAMP)
	$(BIN)/python scripts/chaos.py --prompts 100 --interactive 10 --kills 12 --restarts 2 \
		--mcp-prompts 10 --mcp-kills 4 --model-faults 3

# The flaky-proof check: pytest three times in a row beside one busy loop per core
# (scripts/under_load.py); PYTEST_ARGS narrows it, e.g. PYTEST_ARGS="-k test_help -q".
test-under-load: $(STAMP)
	$(BIN)/python scripts/under_load.py -- $(or $(PYTEST_ARGS),-q)
