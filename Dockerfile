# refresh-agent image. Two variants:
#
#   default (static):  docker build --build-arg VERSION=$(git describe --always) -t quay.io/openshift/refresh-agent:dev .
#     A static Go binary (CGO off) on scratch: nothing else in the image, runs on any node. Its
#     crypto is Go's standard library, not a FIPS-validated module.
#
#   FIPS:              docker build --target fips --build-arg VERSION=... -t quay.io/openshift/refresh-agent:dev-fips .
#     CGO on, dynamically linked against glibc, crypto from a FIPS 140 validated module selected by
#     GOEXPERIMENT (default boringcrypto: BoringSSL's FIPS module linked in), on UBI 9 minimal. For
#     OpenShift payload images (check-payload), build with Red Hat's Go toolset, whose
#     GOEXPERIMENT=strictfipsruntime uses the node's OpenSSL:
#       --build-arg FIPS_BUILDER=<go-toolset image> --build-arg FIPS_BUILDER_TAG=<tag> \
#         --build-arg FIPS_GOEXPERIMENT=strictfipsruntime
#     On a node booted in FIPS mode the binary then uses only FIPS-approved algorithms.
#
# The same build commands run in tests (there is no Docker engine on the development machines).

ARG FIPS_BUILDER=docker.io/library/golang
ARG FIPS_BUILDER_TAG=1.26

FROM ${FIPS_BUILDER}:${FIPS_BUILDER_TAG} AS build-fips
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG FIPS_GOEXPERIMENT=boringcrypto
RUN CGO_ENABLED=1 GOEXPERIMENT=${FIPS_GOEXPERIMENT} GOOS=linux go build -trimpath -ldflags "-X main.version=${VERSION}" \
      -o /out/refresh-agent ./cmd/refresh-agent

# UBI: glibc for the dynamically linked binary (and OpenSSL for strictfipsruntime builds).
FROM registry.access.redhat.com/ubi9/ubi-minimal:9.6 AS fips
ARG VERSION=dev
LABEL org.opencontainers.image.title="refresh-agent" \
      org.opencontainers.image.description="Reboot-free configuration refresh for HyperShift NodePools (FIPS build)" \
      org.opencontainers.image.source="https://github.com/openshift/refresh-agent" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build-fips /out/refresh-agent /usr/bin/refresh-agent
USER 0:0
ENTRYPOINT ["/usr/bin/refresh-agent"]
CMD ["run"]

FROM docker.io/library/golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/refresh-agent ./cmd/refresh-agent

# The default (last) stage. scratch: nothing but the agent (and CA certificates for clients outside
# the cluster). No shell, no package manager. The agent runs as root in a privileged pod: it writes
# host files as any owner and talks to the host's systemd.
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="refresh-agent" \
      org.opencontainers.image.description="Reboot-free configuration refresh for HyperShift NodePools" \
      org.opencontainers.image.source="https://github.com/openshift/refresh-agent" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/refresh-agent /usr/bin/refresh-agent
# On PATH, so that `oc exec ds/refresh-agent -- refresh-agent recover` finds it (scratch sets no PATH).
ENV PATH=/usr/bin
USER 0:0
ENTRYPOINT ["/usr/bin/refresh-agent"]
CMD ["run"]
