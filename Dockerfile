# Builds and tests orchestrator in a container; used by docker-compose.yml
# (service `test`, with DATABASE_URL pointing at service `postgres`).
#
#   docker compose run --rm test
ARG SWIFT_IMAGE=swift:6.2-bookworm
FROM ${SWIFT_IMAGE}

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
