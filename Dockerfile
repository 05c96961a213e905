# PIRCAN: one static binary on a minimal, non-root runtime image.
#   docker build -t pircan .        (or `docker compose up --build`, see docs/docker.md)
# Configuration comes from PIRCAN_* environment variables (DESIGN.md,
# "Configuration contract"); the default command is `pircan serve`.

FROM golang:1.26 AS build
WORKDIR /src
COPY . .
# The cache mounts keep downloaded modules and build results between builds
# (BuildKit, the default builder); only the modules the binary needs are
# fetched, not the tools listed in go.mod.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/pircan ./cmd/pircan

# distroless "static": CA certificates, tzdata and a `nonroot` user (uid 65532),
# no shell and no package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/pircan /usr/local/bin/pircan
USER nonroot:nonroot
# web portal, health and metrics (set PIRCAN_HTTP_ADDR=0.0.0.0:8080 to reach it)
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/pircan"]
CMD ["serve"]
