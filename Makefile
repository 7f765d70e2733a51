# Anonymizer — developer entry points.
#
#   make run      set up .venv with the runtime only (no test, cluster or compiler packages), migrate, load
#                 the demo (user demo / password demo), start one Celery worker in the background and the
#                 web server on http://127.0.0.1:8000/; prints "Ready: open ..." once the server answers.
#                 RUN_HOST / RUN_PORT change the address
#   make worker   one more Celery worker (run it in another terminal, as many times as you like)
#   make serve    production (docs/operations/deployment.md): gunicorn + whitenoise + a Celery worker, DEBUG off, on
#                 PostgreSQL and Redis; stops with a message naming any required variable that is not set
#   make test     adds the test extras to .venv (dev, cluster, fast, docs: see TEST_EXTRAS), then ruff,
#                 lint-imports and mypy (every app), then pytest on SQLite (in parallel, pytest-xdist); then,
#                 when DATABASE_URL is set or CI=true, the database tests again on PostgreSQL. With
#                 CI=true it first creates .venv-pycanon (pycanon, the second opinion of
#                 tests/engine/test_pycanon.py; it pins its own numpy, so it never enters .venv);
#                 without CI the pycanon comparison skips unless `make pycanon-venv` was run once.
#                 PYTEST_WORKERS=N sets the number of pytest processes (default: one per CPU)
#   make lint     ruff, then lint-imports (the import contract of [tool.importlinter] in
#                 pyproject.toml: the engine imports nothing from Django, Celery or the web apps),
#                 then mypy on every app, the engine included, with django-stubs ([tool.mypy])
#   make bench    benchmarks/bench_datafly.py
#   make docs     the documentation site: docs/reference/ regenerated from the code (docs/generate.py),
#                 then mkdocs build --strict (a broken link or a page left out of the nav fails) into var/site/
#
# Optional extras on top of the runtime (pyproject.toml): fast (numba: the compiled lattice roll-up and
# k-member loop; without it numpy computes the same results, slower on long searches) and cluster (running on
# a Dask cluster): .venv/bin/pip install -e ".[fast,cluster]". `make test` installs both.
#
# Without REDIS_URL, Celery uses kombu's filesystem transport under var/broker/ (nothing to install);
# with REDIS_URL=redis://127.0.0.1:6379/0 it uses Redis. Both the web server and the workers must
# see the same setting.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two install stamps: $(STAMP) the runtime (make run, worker, serve), $(STAMP_TEST) the runtime with the
# test extras (make test, lint, bench). Installing the extras also marks the runtime installed, so `make run`
# after `make test` installs nothing; `make test` after `make run` installs the extras on top.
STAMP := $(VENV)/.installed
STAMP_TEST := $(VENV)/.installed-test
TEST_EXTRAS := dev,cluster,fast,docs
RUN_HOST ?= 127.0.0.1
RUN_PORT ?= 8000
# pycanon 1.3.6 pins numpy 2.0.2: it lives in its own venv, driven through tests/pycanon_values.py.
VENV_PYCANON := .venv-pycanon
PYCANON_VERSION := 1.3.6

# The PostgreSQL pass of `make test`: DATABASE_URL when it names a PostgreSQL server, else the
# local one (pytest-django creates and drops test_anonymizer there).
PG_DATABASE_URL ?= $(if $(filter postgres%,$(DATABASE_URL)),$(DATABASE_URL),postgres://postgres@127.0.0.1:5432/anonymizer)
# The PostgreSQL pass re-runs everything that touches the database (models, views, tasks run
# eagerly), but not the browser tests and the slow ones, which gain nothing from a second backend.
PG_MARKERS ?= uses_db and not browser and not slow

# pytest-xdist: PYTEST_WORKERS processes (auto = one per CPU; PYTEST_WORKERS=0 runs in one process),
# tests handed out one by one. Every worker has its own databases, folders, queues and ports, the
# server-starting tests included (tests/conftest.py). Not --dist loadgroup: with pytest 9.2,
# pytest-xdist 3.8.0 silently ignores xdist_group marks (pytest-dev/pytest-xdist#1386).
PYTEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist load

.PHONY: run worker serve serve-env test test-sqlite test-postgres lint bench docs venv test-venv pycanon-venv clean

venv: $(STAMP)

test-venv: $(STAMP_TEST)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when pyproject.toml changed since the last install.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e .
	touch $@

# The set-valued loops (numba, the fast extra) compiled into numba's cache beside them once, at install: the first
# large set-valued run then loads machine code instead of compiling it (setvalued/kernels.py compile_cached).
$(STAMP_TEST): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -e ".[$(TEST_EXTRAS)]"
	$(BIN)/python -c "from anonymizer_app.engine.setvalued import kernels; kernels.compile_cached()"
	touch $@ $(STAMP)

pycanon-venv: $(VENV_PYCANON)/.installed

$(VENV_PYCANON)/.installed:
	$(PYTHON) -m venv $(VENV_PYCANON)
	$(VENV_PYCANON)/bin/pip install "pycanon==$(PYCANON_VERSION)"
	touch $@

# Development: DEBUG on (tracebacks, the development SECRET_KEY); production is `make serve`. `make worker`
# beside `make serve` (SECRET_KEY set) keeps DEBUG off like the server.
run: export DEBUG ?= 1
worker: export DEBUG ?= $(if $(SECRET_KEY),0,1)

run: $(STAMP)
	@if (exec 3<>/dev/tcp/$(RUN_HOST)/$(RUN_PORT)) 2>/dev/null; then \
	  echo "make run: $(RUN_HOST):$(RUN_PORT) is already in use (another server?): stop it, or set RUN_PORT" >&2; \
	  exit 1; fi
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py load_demo --user demo --if-empty
	$(BIN)/python manage.py sweep_jobs
	@echo "Starting a Celery worker in the background (more: 'make worker' in another terminal)"
	@# However runserver ends (Ctrl-C, crash), the trap stops the worker: TERM (warm shutdown,
	@# finish the current task), then QUIT (cold shutdown) if it is still busy after 10 s, then KILL after
	@# 10 s more (its job is then re-run by the next worker's sweep). The Ready line comes once the server
	@# accepts connections (after its checks), as the last line before the requests' log.
	@$(BIN)/celery -A anonymizer_app worker --loglevel=INFO --hostname=run-$$$$@%h & \
	  worker=$$!; \
	  stop_worker() { \
	    kill -TERM $$worker 2>/dev/null || return 0; \
	    for _ in $$(seq 20); do kill -0 $$worker 2>/dev/null || return 0; sleep 0.5; done; \
	    kill -QUIT $$worker 2>/dev/null; \
	    for _ in $$(seq 20); do kill -0 $$worker 2>/dev/null || return 0; sleep 0.5; done; \
	    kill -KILL $$worker 2>/dev/null; wait $$worker 2>/dev/null; \
	  }; \
	  ( for _ in $$(seq 1200); do \
	      if (exec 3<>/dev/tcp/$(RUN_HOST)/$(RUN_PORT)) 2>/dev/null; then \
	        echo "Ready: open http://$(RUN_HOST):$(RUN_PORT)/ and log in as demo / demo (Ctrl-C stops the server and the worker)"; \
	        exit 0; fi; \
	      sleep 0.25; \
	    done ) & \
	  ready=$$!; \
	  trap 'kill $$ready 2>/dev/null; stop_worker' EXIT; \
	  trap 'exit 130' INT TERM; \
	  $(BIN)/python manage.py runserver $(RUN_HOST):$(RUN_PORT)

worker: $(STAMP)
	nice -n $${WORKER_NICE:-10} $(BIN)/celery -A anonymizer_app worker --loglevel=INFO --hostname=worker-$$$$@%h

# Production (docs/operations/deployment.md): DEBUG off, gunicorn behind your TLS proxy, static files collected into
# STATIC_ROOT (var/static) and served by whitenoise, one Celery worker in the background (more: `make worker`
# with the same environment). Needs SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL (PostgreSQL), REDIS_URL and
# ANONYMIZER_VAULT_KEY (docs/vault.md); serve-env checks them before anything starts. BIND (127.0.0.1:8000),
# WEB_WORKERS (4), WEB_THREADS (4), WEB_KEEPALIVE (75 s; gunicorn.conf.py), WORKER_CONCURRENCY (the number of
# CPUs), WORKER_NICE (10: jobs yield the CPU to the pages) and the variables of its settings table are read if set.
serve: serve-env $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/python manage.py sweep_jobs
	@nice -n $${WORKER_NICE:-10} $(BIN)/celery -A anonymizer_app worker --loglevel=INFO --hostname=serve-$$$$@%h \
	    --concurrency $${WORKER_CONCURRENCY:-$$(nproc)} & \
	  worker=$$!; \
	  stop_worker() { \
	    kill -TERM $$worker 2>/dev/null || return 0; \
	    for _ in $$(seq 20); do kill -0 $$worker 2>/dev/null || return 0; sleep 0.5; done; \
	    kill -QUIT $$worker 2>/dev/null; \
	    for _ in $$(seq 20); do kill -0 $$worker 2>/dev/null || return 0; sleep 0.5; done; \
	    kill -KILL $$worker 2>/dev/null; wait $$worker 2>/dev/null; \
	  }; \
	  trap stop_worker EXIT; \
	  trap 'exit 130' INT TERM; \
	  $(BIN)/gunicorn anonymizer_app.wsgi:application --config gunicorn.conf.py

# Every missing or wrong variable is named at once, with an example.
serve-env:
	@status=0; \
	  need() { echo "make serve: set $$1: $$2 (docs/operations/deployment.md)" >&2; status=2; }; \
	  [ -n "$$SECRET_KEY" ] || need SECRET_KEY \
	    "a long random value, e.g. the output of python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"; \
	  [ -n "$$ALLOWED_HOSTS" ] || need ALLOWED_HOSTS "the host name(s) of the site, e.g. anonymizer.example.org"; \
	  case "$$DATABASE_URL" in postgres://*|postgresql://*) ;; \
	    *) need DATABASE_URL "the PostgreSQL database, e.g. postgres://anonymizer@db.internal:5432/anonymizer";; esac; \
	  case "$$REDIS_URL" in redis://*|rediss://*) ;; \
	    *) need REDIS_URL "the Redis server that carries the jobs, e.g. redis://127.0.0.1:6379/0";; esac; \
	  case "$$(echo "$${DEBUG:-}" | tr A-Z a-z)" in 1|true|yes|on) \
	    echo "make serve: DEBUG must be off on a server: unset it or set DEBUG=0" >&2; status=2;; esac; \
	  vault_key="the key of the stored secrets, its own (never SECRET_KEY's), made by python3 -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32)).decode())'; docs/vault.md"; \
	  if [ -z "$$ANONYMIZER_VAULT_KEY" ]; then need ANONYMIZER_VAULT_KEY "$$vault_key"; \
	  elif ! printf '%s' "$$ANONYMIZER_VAULT_KEY" | grep -Eqx '[A-Za-z0-9_-]{43}='; then \
	    need ANONYMIZER_VAULT_KEY "not a Fernet key (44 characters of url-safe base64): $$vault_key"; fi; \
	  exit $$status

lint: $(STAMP_TEST)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

test: $(STAMP_TEST)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(MAKE) --no-print-directory test-sqlite
	@if [ -n "$$DATABASE_URL" ] || [ "$$CI" = "true" ]; then \
	  $(MAKE) --no-print-directory test-postgres; \
	else \
	  echo "(PostgreSQL pass skipped: set DATABASE_URL or CI=true to run it)"; \
	fi

# In CI (CI=true) the pycanon comparison must run, so its venv is a prerequisite there only: a fresh
# machine's `make test` needs nothing beyond .venv (the comparison then skips, saying how to enable it).
test-sqlite: $(STAMP_TEST) $(if $(filter true,$(CI)),$(VENV_PYCANON)/.installed)
	env -u DATABASE_URL $(BIN)/pytest -q $(PYTEST_PARALLEL)

test-postgres: $(STAMP_TEST)
	@echo "== Database tests again on PostgreSQL: $(PG_DATABASE_URL) (-m '$(PG_MARKERS)') =="
	DATABASE_URL="$(PG_DATABASE_URL)" $(BIN)/pytest -q $(PYTEST_PARALLEL) -m "$(PG_MARKERS)"

bench: $(STAMP_TEST)
	$(BIN)/python benchmarks/bench_datafly.py

docs: $(STAMP_TEST)
	$(BIN)/python docs/generate.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir var/site

clean:
	rm -rf $(VENV) $(VENV_PYCANON) .pytest_cache .ruff_cache .import_linter_cache *.egg-info
