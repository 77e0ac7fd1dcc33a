# One image for the worker (and, later, the gateway): the project installed from this checkout.
FROM python:3.11-slim
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
