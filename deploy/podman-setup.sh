#!/usr/bin/env bash
# Make a Debian machine (root, no Docker engine) ready to run deploy/compose.yaml with podman,
# as `make deploy-test` does: install podman, runc and debootstrap when missing, and set in
# /etc/containers/containers.conf what containers on such machines need when it is not set:
#   [containers] default_ulimits = []   (a container in a container may not raise RLIMIT_NOFILE:
#                                        "setrlimit RLIMIT_NOFILE: Operation not permitted")
#   [engine]     runtime = "runc"       (crun: "cgroups in hybrid mode not supported")
# Leaves every setting already there as it is.
set -euo pipefail
CONF=/etc/containers/containers.conf

missing=()
for cmd in podman runc debootstrap; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq podman runc debootstrap >/dev/null
fi

mkdir -p "$(dirname "$CONF")"
touch "$CONF"
# add KEY = VALUE to [TABLE] unless KEY is set there (or anywhere: keys are table-unique here)
set_default() {
  local table=$1 key=$2 value=$3
  grep -qE "^[[:space:]]*$key[[:space:]]*=" "$CONF" && return 0
  if grep -qE "^\[$table\][[:space:]]*$" "$CONF"; then
    sed -i "/^\[$table\][[:space:]]*$/a $key = $value" "$CONF"
  else
    printf '\n[%s]\n%s = %s\n' "$table" "$key" "$value" >>"$CONF"
  fi
  echo "$CONF: [$table] $key = $value"
}
set_default containers default_ulimits '[]'
set_default engine runtime '"runc"'
podman --version
