#!/bin/sh
# Stand-in for the official Redis image's docker-entrypoint.sh (deploy/local-redis.Containerfile):
# started as root, it gives /data to the redis user and runs the command as that user.
set -e
if [ "$(id -u)" = 0 ]; then
  chown -R redis:redis /data 2>/dev/null || true
  exec setpriv --reuid=redis --regid=redis --init-groups "$@"
fi
exec "$@"
