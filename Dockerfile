# ESC worker image for docker-compose.yml (the native alternative is `esc stack up` + `esc up`).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ESC_STATE_DIR=/var/lib/esc \
    ESC_HOST=0.0.0.0 \
    ESC_WEB_PORT=6066

WORKDIR /app
COPY pyproject.toml README.md ./
COPY contract ./contract
COPY streams ./streams
COPY agents ./agents
COPY esc ./esc
RUN pip install ".[stack,embed]" \
 && useradd --system --create-home --uid 10001 esc \
 && mkdir -p /data /var/lib/esc \
 && chown esc:esc /data /var/lib/esc

USER esc
VOLUME ["/data", "/var/lib/esc"]
EXPOSE 6066
CMD ["esc", "up", "--data", "/data"]
