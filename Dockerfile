# The moult image: the release binaries on a small Debian, for job runners (see the Kubernetes example in
# Sources/MoultCommand/MoultCommand.docc/Fleets.md). Built by `make image`; nothing else needs Docker.
#
#   docker build -t moult:0.1.0 .
#   docker run --rm -v "$PWD:/data" moult:0.1.0 inspect /data/App.sqlite

# Build: the Swift toolchain (6.2 or later: swift-prometheus needs its tools version) on Debian 12, the C libraries' headers, a release build with the Swift
# runtime linked in statically (the runtime image then needs no toolchain).
FROM swift:6.2-bookworm AS build
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-dev liblmdb-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The whole package: its manifest names every target's folder, tests and examples included
# (.dockerignore leaves out builds, results and git).
COPY . .
RUN swift build -c release --static-swift-stdlib --product moult \
    && swift build -c release --static-swift-stdlib --product moult-people \
    && install -d /out && cp .build/release/moult .build/release/moult-people /out/

# Run: the two binaries and the shared libraries they link (SQLite, LMDB, libxml2 for FoundationXML).
FROM debian:bookworm-slim
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libsqlite3-0 liblmdb0 libxml2 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/moult /out/moult-people /usr/local/bin/
COPY Datasets/People /usr/share/moult/People
# Not root: a volume must let uid 65534 write (Kubernetes: the pod's securityContext.fsGroup: 65534, as in
# Fleets.md's Job). scripts/k8s-example.sh runs that Job's args as this user against a volume owned so,
# and without fsGroup, where Moult must stop with a message naming the folder (no Docker needed).
USER 65534:65534
WORKDIR /data
ENTRYPOINT ["moult"]
CMD ["--help"]
