# One image for the worker (and, later, the gateway): the project installed from this checkout.
FROM python:3.11-slim
# The sandbox of shell commands and stdio MCP servers (docs/security-sandbox.md).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap slirp4netns && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md worker.py ./
COPY workflows ./workflows
COPY activities ./activities
COPY gateway ./gateway
COPY seawall ./seawall
RUN pip install --no-cache-dir ".[otel,s3]" \
    && useradd --create-home seawall \
    && mkdir /workspaces && chown seawall /workspaces
USER seawall
ENV SEAWALL_LOG_FORMAT=json
CMD ["python", "worker.py"]
