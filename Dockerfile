# agent-history services image (indexer now; embedder and journal-sync join as they land).
# Servers use a real PostgreSQL (compose.yaml pins ParadeDB); the embedded server is for laptops.
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY agent_history ./agent_history
COPY migrations ./migrations
COPY sql ./sql
RUN pip install . && useradd --create-home --uid 10001 ah
USER ah
ENTRYPOINT ["agent-history"]
CMD ["index", "--every", "60"]
