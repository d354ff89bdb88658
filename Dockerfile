# Stages:
#   build    the toolchain, the sources, a debug build with tests: docker-compose.yml's `test`
#            service runs the test suite in it against the `postgres` service.
#            docker compose run --rm test
#   runtime  the release binary and libpq on a slim Swift runtime image (docs/ci.md):
#            docker build --target runtime -t orchestrator .
#            docker run --rm -e DATABASE_URL -v "$PWD/migrations:/migrations:ro" orchestrator status --model /migrations
ARG SWIFT_IMAGE=swift:6.2-bookworm
ARG RUNTIME_IMAGE=swift:6.2-bookworm-slim

FROM ${SWIFT_IMAGE} AS build

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        libpq-dev pkg-config postgresql-client make \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . .

# Resolve and build at image build time so that `docker compose run test`
# only runs the tests.
RUN swift build --build-tests

ENV CI=true
CMD ["bash", "-c", "swift build --build-tests && swift test"]

# The release binary, alone in /out.
FROM build AS release
RUN swift build -c release --product orchestrator \
 && install -D "$(swift build -c release --show-bin-path)/orchestrator" /out/orchestrator

# The binary plus libpq. The slim Swift image brings the Swift runtime libraries (Foundation,
# FoundationXML and what they load) and nothing to build with.
FROM ${RUNTIME_IMAGE} AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libpq5 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=release /out/orchestrator /usr/local/bin/orchestrator
# Root by default, as CI container jobs expect (a checkout is written into the container);
# `docker run --user 65534` runs it as nobody.
WORKDIR /work
ENTRYPOINT ["orchestrator"]
CMD ["--help"]
