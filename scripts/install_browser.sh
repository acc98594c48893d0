#!/usr/bin/env bash
# Debian's chromium and chromium-driver for the HTML report's browser test (tests/test_html_report.py),
# installed only when missing (as root, or through sudo). scripts/test.sh runs it, so CI has them.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
    exit 0
fi
SUDO=()
[ "$(id -u)" = 0 ] || SUDO=(sudo)
echo "install_browser: installing Debian's chromium and chromium-driver (apt-get)"
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq chromium chromium-driver >/dev/null
