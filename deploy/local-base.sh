#!/usr/bin/env bash
# Base images for deploy/ built from Debian packages, for machines that reach Debian's package
# mirror and PyPI but no container registry (no docker.io). Needs root, podman (or docker) and
# debootstrap. Each image is skipped when it already exists (delete it to rebuild).
#
#   deploy/local-base.sh            # all three images below
#   ENGINE=docker deploy/local-base.sh
#
# rummy-local/python:3.11   stands in for python:3.11-slim (the Dockerfiles' BASE_IMAGE): Debian
#                           with python3, venv and pip; `python` and `pip` on PATH install into
#                           /usr/local as in the official image.
# rummy-local/redis:7       stands in for redis:7.4-alpine: Debian's redis-server and redis-cli,
#                           /data, and a docker-entrypoint.sh that drops to the redis user as
#                           the official image's does (compose's Redis entrypoint calls it).
# rummy-local/prometheus:2  stands in for prom/prometheus: Debian's prometheus package (2.x),
#                           /prometheus owned by nobody, wget for the compose health check.
# Grafana has no Debian package: it cannot be built here (its files are checked statically).
#
# The Debian release and mirror are the host's (/etc/os-release, /etc/apt/sources.list*), so the
# python3 in the image is the host's python3 (3.11 on bookworm). Certificates the host added to
# /usr/local/share/ca-certificates are added to the image too, so pip in a build reaches PyPI
# through the same TLS-inspecting proxy the host goes through, if any.
set -euo pipefail
ENGINE=${ENGINE:-podman}
PY_IMAGE=${RUMMY_LOCAL_PYTHON_IMAGE:-localhost/rummy-local/python:3.11}
REDIS_IMAGE=${RUMMY_LOCAL_REDIS_IMAGE:-localhost/rummy-local/redis:7}
PROM_IMAGE=${RUMMY_LOCAL_PROMETHEUS_IMAGE:-localhost/rummy-local/prometheus:2}
HERE=$(cd "$(dirname "$0")" && pwd)

have() { "$ENGINE" image exists "$1" 2>/dev/null || "$ENGINE" image inspect "$1" >/dev/null 2>&1; }

# The host's release code name and first Debian mirror (deb822 .sources or one-line .list).
suite=$(. /etc/os-release && echo "${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}")
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v '^ *#' \
  | grep -oE '(https?://[^ ]+/debian)/?( |$)' | grep -v security | head -n1 | tr -d ' ' || true)
mirror=${mirror:-http://deb.debian.org/debian}

if ! have "$PY_IMAGE"; then
  t0=$(date +%s)
  root=$(mktemp -d /var/tmp/rummy-base.XXXXXX)
  trap 'rm -rf "$root"' EXIT
  echo "debootstrap $suite from $mirror into $root"
  debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
    "$suite" "$root" "$mirror" >"$root.log" 2>&1 || { tail -n 30 "$root.log"; exit 1; }
  rm -f "$root.log"
  # pip installs into /usr/local as in python:3.11-slim (Debian marks its python
  # "externally managed"; in an image nothing else manages it)
  rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null 2>&1
  fi
  chroot "$root" apt-get clean
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc/* \
    "$root"/usr/share/man/* "$root"/usr/share/locale/*
  tar -C "$root" -c . | "$ENGINE" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PIP_ROOT_USER_ACTION=ignore' \
    --change 'CMD ["python3"]' - "$PY_IMAGE" >"$root.log" 2>&1 || { cat "$root.log"; exit 1; }
  rm -f "$root.log"
  rm -rf "$root"; trap - EXIT
  echo "built $PY_IMAGE in $(( $(date +%s) - t0 )) s"
else
  echo "$PY_IMAGE exists"
fi

if ! have "$REDIS_IMAGE"; then
  t0=$(date +%s)
  "$ENGINE" build -q -t "$REDIS_IMAGE" --build-arg BASE_IMAGE="$PY_IMAGE" \
    -f "$HERE/local-redis.Containerfile" "$HERE" >/dev/null
  echo "built $REDIS_IMAGE in $(( $(date +%s) - t0 )) s"
else
  echo "$REDIS_IMAGE exists"
fi

if ! have "$PROM_IMAGE"; then
  t0=$(date +%s)
  "$ENGINE" build -q -t "$PROM_IMAGE" --build-arg BASE_IMAGE="$PY_IMAGE" \
    -f "$HERE/local-prometheus.Containerfile" "$HERE" >/dev/null
  echo "built $PROM_IMAGE in $(( $(date +%s) - t0 )) s"
else
  echo "$PROM_IMAGE exists"
fi
