# agent-history services image: indexer, embedder and journal-sync (compose.yaml runs all three).
# Servers use a real PostgreSQL (compose.yaml pins ParadeDB); the embedded server is for laptops.
#
# Stage 1 builds the project wheel and collects every dependency as a wheel; stage 2 installs
# them from that directory only (no index, no compiler) into a slim image run as a non-root user.
ARG PYTHON_IMAGE=python:3.12.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY agent_history ./agent_history
COPY migrations ./migrations
COPY sql ./sql
RUN pip wheel --wheel-dir /wheels .

FROM ${PYTHON_IMAGE} AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels agent-history-catalogue \
    && useradd --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin --uid 10001 ah
USER 10001:10001
WORKDIR /tmp
# compose.yaml overrides these per service; the root filesystem can be mounted read-only.
ENV AGENT_HISTORY_DATA_DIR=/tmp/agent-history
HEALTHCHECK --interval=30s --timeout=20s --start-period=30s --retries=3 \
    CMD ["agent-history", "db", "status"]
ENTRYPOINT ["agent-history"]
CMD ["index", "--every", "60"]
