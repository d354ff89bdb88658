# GNU make. Targets: build, test, fuzz, demo, clean, deps.
#
#   make test                       # install deps if missing, build, swift test
#                                   # against PostgreSQL in containers (podman or
#                                   # docker; scripts/containers/with-containers.sh)
#   make fuzz                       # every *Fuzz* suite with FUZZ_INPUTS=10000
#   make demo                       # the CLI on migrations/ against PostgreSQL
#   make test SWIFTPM_FLAGS='--scratch-path .build-ci'
#
# DATABASE_URL: when set, test/demo use that server instead of a throwaway one
# (see scripts/with-postgres.sh). POSTGRES_IMAGE: the image make test runs
# PostgreSQL from (default postgres:15 when a registry has it, else one built
# from Debian's packages: docs/development.md).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

SWIFT ?= swift
# Extra SwiftPM options for every swift command, e.g. --scratch-path .build-ci
SWIFTPM_FLAGS ?=
export SWIFTPM_FLAGS

.DEFAULT_GOAL := build
.PHONY: build test fuzz demo bench bench-positions bench-online bench-fleet bench-replication clean deps

build:
	$(SWIFT) build $(SWIFTPM_FLAGS)

deps:
	bash scripts/install-deps.sh

# Builds the test targets too before the server starts, so that the throwaway
# PostgreSQL container only lives while the tests run; the topology suites start
# their own containers, and every one is removed afterwards. The whole swift test output is
# written to a temp log (a file, not a pipe: scripts/run-logged.sh says why)
# and shown as it grows; the last line printed is the summary
# (scripts/test-summary.sh). Fails when swift test fails.
test: deps
	$(SWIFT) build $(SWIFTPM_FLAGS) --build-tests
	@log="$$(mktemp "$${TMPDIR:-/tmp}/orchestrator-test.XXXXXX")"; \
	export ORCHESTRATOR_SERVER_NOTE="$$log.servers"; \
	echo "make test: log in $$log"; \
	status=0; \
	bash scripts/run-logged.sh "$$log" bash scripts/containers/with-containers.sh $(SWIFT) test $(SWIFTPM_FLAGS) || status=$$?; \
	echo; \
	echo "make test: log in $$log"; \
	bash scripts/test-summary.sh "$$log" "$$status" "$$ORCHESTRATOR_SERVER_NOTE"; \
	rm -f "$$ORCHESTRATOR_SERVER_NOTE"; \
	exit $$status

# The suites whose names contain Fuzz (also part of `make test`, with a few hundred inputs
# each), with 10,000 inputs per target; the seeds are fixed, so a failure reproduces.
FUZZ_INPUTS ?= 10000
fuzz: deps
	$(SWIFT) build $(SWIFTPM_FLAGS) --build-tests
	FUZZ_INPUTS=$(FUZZ_INPUTS) $(SWIFT) test $(SWIFTPM_FLAGS) --skip-build --filter Fuzz

demo: deps
	$(SWIFT) build $(SWIFTPM_FLAGS)
	bash scripts/with-postgres.sh bash scripts/demo.sh

# A benchmark, not a test: orchestrator against hand-written SQL in the same run (scripts/bench.sh).
bench: deps
	command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	bash scripts/with-postgres.sh bash scripts/bench.sh

# The positions parts of make bench alone: a to-many made ordered, numbered by a lightweight
# step and by a heavyweight step's stage 2, apply against hand-written SQL.
bench-positions: deps
	command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	BENCH_PARTS="positions heavyweight-positions" bash scripts/with-postgres.sh bash scripts/bench.sh

# The application's writes during a migration, plain apply against apply --online, with pgbench
# as the application (scripts/bench-online.sh, docs/online-migrations.md); the expand part: two
# releases writing during apply --expand (scripts/bench-online-expand.sh, docs/online-benchmark.md).
bench-online: deps
	bash scripts/with-postgres.sh bash scripts/bench-online.sh

# fleet status of 10,000 stores, and fleet apply against xargs -P 4 apply over identical
# copies (scripts/bench-fleet.sh, docs/fleets-reference.md).
bench-fleet: deps
	command -v /usr/bin/time >/dev/null || (apt-get update -qq && apt-get install -y -qq time)
	bash scripts/with-postgres.sh bash scripts/bench-fleet.sh

# A standby's replay lag during an online backfill under pgbench load, with --max-replica-lag
# throttling and without, on a primary and a standby in containers (scripts/bench-replication.sh,
# docs/replication.md).
bench-replication: deps
	bash scripts/bench-replication.sh

clean:
	$(SWIFT) package $(SWIFTPM_FLAGS) clean
