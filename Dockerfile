# Sightline bridge as a container image: the wheel built from this checkout, run as a non-root user,
# its data (secret, worlds.json, sightline.db) on the /data volume, health-checked through /healthz.
#   docker build -t sightline-bridge .
#   docker run -p 8765:8765 -v sightline-data:/data sightline-bridge
# deploy/compose.yaml runs it beside felddy/foundryvtt behind Caddy (TLS).

FROM python:3.12-slim AS wheel
# A C compiler for the engine's loops (Cython; the image carries Python's headers): required, so the image
# never ships them uncompiled.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY bridge ./bridge
RUN SIGHTLINE_REQUIRE_COMPILED=1 pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    SIGHTLINE_DATA_DIR=/data \
    SIGHTLINE_HEALTHZ=http://127.0.0.1:8765/healthz
RUN useradd --create-home --uid 10001 --user-group sightline \
    && mkdir /data \
    && chown sightline:sightline /data
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 10001:10001
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; sys.exit(urllib.request.urlopen(os.environ['SIGHTLINE_HEALTHZ'], timeout=4).status != 200)"]
ENTRYPOINT ["sightline"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8765"]
