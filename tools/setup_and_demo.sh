#!/usr/bin/env bash
# Set everything up on a fresh machine and run the main job on the bundled demo site.
#   bash tools/setup_and_demo.sh
# Installs Debian's Chromium, redis-server (the tests start their own Redis) and libmagic1
# (datatrove's WARC reader) with root or sudo, creates .venv with the pinned requirements,
# then crawls the demo site.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# libmagic for datatrove's WARC reader (python-magic), which the datatrove step runs after.
ldconfig -p 2>/dev/null | grep -q "libmagic.so.1" || missing+=(libmagic1)
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
fi
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt
.venv/bin/python tools/run_demo.py "$@"
