#!/usr/bin/env bash
# Installs Debian's Chromium for the browser tests when it is missing (npm packages that
# download their own browser cannot work on machines that only reach the registries).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then exit 0; fi
if [ -n "${PLINTH_SKIP_BROWSER_INSTALL:-}" ]; then exit 0; fi
echo "[chromium] installing Debian's chromium with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" != "0" ]; then SUDO=sudo; else SUDO=; fi
$SUDO apt-get update -qq >&2
$SUDO apt-get install -y -qq chromium >&2
