# refresh-agent image: a static binary on a minimal base. Build with
#   docker build --build-arg VERSION=$(git describe --always) -t quay.io/openshift/refresh-agent:dev .
# The same build command runs in CI (make build-static) and is checked there by a test.

FROM docker.io/library/golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/refresh-agent ./cmd/refresh-agent

# scratch: nothing but the agent (and CA certificates for clients outside the cluster). No shell, no
# package manager. The agent runs as root in a privileged pod: it writes host files as any owner
# and talks to the host's systemd.
FROM scratch
ARG VERSION=dev
LABEL org.opencontainers.image.title="refresh-agent" \
      org.opencontainers.image.description="Reboot-free configuration refresh for HyperShift NodePools" \
      org.opencontainers.image.source="https://github.com/openshift/refresh-agent" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build /out/refresh-agent /usr/bin/refresh-agent
USER 0:0
ENTRYPOINT ["/usr/bin/refresh-agent"]
CMD ["run"]
