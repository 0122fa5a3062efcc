# syntax=docker/dockerfile:1
# The async-worker image: the processor binary on distroless cc (glibc,
# libgcc_s, CA certificates; no shell), as UID 65532, at /llm-d-async (the
# upstream chart's `command`) and /usr/local/bin/async-worker.
#
#   docker buildx build --platform linux/amd64,linux/arm64 -t IMAGE:TAG .
#
# The builder runs on the build machine's platform and cross-compiles for
# TARGETARCH (amd64 or arm64). `cargo xtask image` (a step of `cargo xtask
# ci`) builds the binary with this file's cargo command and runs it in an
# empty root holding only what the runtime stage adds; see
# docs/OPERATIONS.md, "Kubernetes".

ARG RUST_VERSION=1.95.0

FROM --platform=$BUILDPLATFORM rust:${RUST_VERSION}-slim-bookworm AS builder
ARG RUST_VERSION
ARG TARGETARCH
ARG BUILDARCH
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# The toolchain of the image, not rust-toolchain.toml's component list
# (clippy and rustfmt are not needed to build). The same release.
ENV RUSTUP_TOOLCHAIN=${RUST_VERSION} \
    CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
    CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc \
    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER=x86_64-linux-gnu-gcc \
    CC_x86_64_unknown_linux_gnu=x86_64-linux-gnu-gcc
# The target triple, and a C cross compiler (with its binutils) when the
# build machine's architecture differs (ring compiles C).
RUN case "${TARGETARCH}" in \
      amd64) triple=x86_64-unknown-linux-gnu; gcc=gcc-x86-64-linux-gnu; gnu=x86_64-linux-gnu ;; \
      arm64) triple=aarch64-unknown-linux-gnu; gcc=gcc-aarch64-linux-gnu; gnu=aarch64-linux-gnu ;; \
      *) echo "TARGETARCH=${TARGETARCH}: only amd64 and arm64 are built" >&2; exit 1 ;; \
    esac; \
    echo "${triple}" > /rust-target; \
    echo "${gnu}-strip" > /rust-strip; \
    if [ "${TARGETARCH}" != "${BUILDARCH}" ]; then \
      apt-get update; \
      apt-get install -y --no-install-recommends "${gcc}" "libc6-dev-${TARGETARCH}-cross"; \
      rm -rf /var/lib/apt/lists/*; \
    fi; \
    rustup target add "${triple}"
WORKDIR /src
COPY . .
# The release profile keeps line tables for backtraces; the image drops
# them (99 MB to 20 MB; panic messages keep their file:line).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target,sharing=locked \
    cargo build --release --locked -p async-worker --bin async-worker --target "$(cat /rust-target)"; \
    mkdir -p /out/usr/local/bin; \
    cp "target/$(cat /rust-target)/release/async-worker" /out/llm-d-async; \
    "$(cat /rust-strip)" --strip-debug /out/llm-d-async; \
    ln -s /llm-d-async /out/usr/local/bin/async-worker

FROM gcr.io/distroless/cc-debian12:nonroot
LABEL org.opencontainers.image.title="async-worker" \
      org.opencontainers.image.description="Durable peek-claim-ack processor for the llm-d-async redis-sortedset queue" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=builder /out/ /
USER 65532:65532
# Health (/healthz, /readyz) and /metrics, the chart's default ports.
EXPOSE 8081 9090
ENTRYPOINT ["/llm-d-async"]
