# syntax=docker/dockerfile:1
#
# firegate server image: one static Go binary on Debian bookworm-slim with the
# tools it drives at run time (Chromium for the browser engine, pdftoppm and
# tesseract for PDF OCR, fonts so screenshots of non-Latin pages render).
#
#   docker build -t firegate:dev .
#   docker run --rm -p 3002:3002 -v firegate-data:/data firegate:dev
#
# The same image runs the API (`serve`, the default) and queue workers
# (`worker`); see docker-compose.yml and deploy/.

ARG GO_VERSION=1.26

# The binary is static, so it is cross-compiled on the build machine's own
# platform for whichever one the image targets (docker buildx --platform).
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS TARGETARCH
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-mod=readonly
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags="-s -w" -o /out/server ./cmd/server

FROM debian:bookworm-slim AS runtime
# chromium-headless-shell: the browser engine (actions, screenshots,
#   client-rendered pages): Chromium's headless shell, which renders the
#   same pages as the full browser at about twice the pages per CPU second
#   (cmd/browserbench, BENCHMARKS.md). CHROME_PATH names the binary, not the
#   /usr/bin wrapper script, which does not exec it.
# fonts-*: Latin metrics-compatible faces, most other scripts, CJK and colour
#   emoji, so screenshots and PDFs of any page show text instead of boxes.
# poppler-utils, tesseract-ocr: `parsers: [{type: "pdf", mode: "ocr"}]`.
# ffmpeg: the `audio` and `video` formats (MP3 and MP4 of a page's media).
# ca-certificates: TLS to the pages scraped and to Postgres/Redis/S3.
# curl: the HEALTHCHECK below (the binary has no probe sub-command).
# tini: PID 1 that reaps Chromium's child processes and forwards SIGTERM.
# bubblewrap: the sandbox of interact programs (INTERACT_RUNTIMES; bash
#   here, node and python need their interpreters in a derived image, and
#   the container must allow user namespaces).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      bubblewrap \
      ca-certificates \
      chromium-headless-shell \
      curl \
      ffmpeg \
      fonts-liberation \
      fonts-noto-cjk \
      fonts-noto-color-emoji \
      fonts-noto-core \
      poppler-utils \
      tesseract-ocr \
      tini \
 && rm -rf /var/lib/apt/lists/*

RUN useradd --system --uid 10001 --user-group --create-home --home-dir /home/firegate \
      --shell /usr/sbin/nologin firegate \
 && mkdir -p /data/media \
 && chown -R firegate:firegate /data

COPY --from=build /out/server /usr/local/bin/server

ENV CHROME_PATH=/usr/lib/chromium/chromium-headless-shell \
    DATA_DIR=/data \
    PORT=3002
VOLUME ["/data"]
EXPOSE 3002
USER 10001:10001
WORKDIR /home/firegate

# Liveness only: /health answers while the process serves HTTP. Readiness
# (/ready: store, queue and cache reachable) is for load balancers and
# Kubernetes, not for restarting a container.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:${PORT:-3002}/health" || exit 1

ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/server"]
CMD ["serve"]
