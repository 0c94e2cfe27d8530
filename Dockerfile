# paperclub for hosts without buildpacks. Build: docker build -t paperclub .
#
# One machine with SQLite (the database and its search index in the /data volume):
#   docker run -d --env-file paperclub.env -v paperclub-data:/data -p 3000:3000 paperclub
# With PostgreSQL, upgrade the schema once per release, then start the processes:
#   docker run --rm --env-file paperclub.env paperclub paperclub db upgrade
#   docker run -d --env-file paperclub.env -p 3000:3000 paperclub paperclub serve slack --no-scheduler
#   docker run -d --env-file paperclub.env paperclub paperclub serve discord
# docs/configuration.md lists the variables that go in paperclub.env; docs/deploying.md says how to deploy.

FROM python:3.11-slim AS build
WORKDIR /src
# PyStemmer and friends ship wheels for this Python; nothing is compiled here.
COPY pyproject.toml README.md ./
COPY bot bot
COPY adapters adapters
COPY store store
RUN pip install --no-cache-dir --prefix=/install .

FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PORT=3000 \
    PAPERCLUB_DATABASE_URL=sqlite:////data/paperclub.db \
    XDG_CACHE_HOME=/data/cache
COPY --from=build /install /usr/local
# Never root: a non-login user that owns only /data.
RUN useradd --system --uid 10001 --home-dir /data paperclub \
    && mkdir -p /data && chown paperclub /data
USER paperclub
WORKDIR /data
VOLUME /data
EXPOSE 3000
# /healthz answers on $PORT whatever runs (Slack's HTTP server, or a health-only one):
# 503 when the database is unreachable.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('PORT', '3000'), timeout=4)"]
# serve handles SIGTERM itself (docker stop): the post in flight finishes, exit 0.
# SQLite brings its own schema up to date on start; PostgreSQL needs `paperclub db upgrade`.
CMD ["paperclub", "serve"]
