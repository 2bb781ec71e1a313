#!/usr/bin/env bash
# Install the Debian packages whose server binaries `stratabench services`
# starts privately: redis-server, memcached, postgresql, mariadb-server;
# and the headless browser the HTML report's test drives through Selenium:
# chromium-headless-shell and chromium-driver (Selenium's own browser
# download is never used: it needs the network); and valgrind, whose
# callgrind `--count instructions` runs each counted cell under.
#
# Idempotent: installs only what is missing and does nothing when all are
# present. The system services these packages ship are never left running:
# stratabench starts its own instances on free loopback ports, and a system
# server on a default port would only get in the way. While installing, a
# policy-rc.d that answers 101 ("action forbidden") keeps Debian's
# maintainer scripts from starting them; one that exists is left as it is.
#
# Usage: scripts/install-servers.sh        (as root, or with sudo available)
set -euo pipefail

packages=(redis-server memcached postgresql mariadb-server chromium-headless-shell chromium-driver valgrind)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q '^install ok installed$'; then
        missing+=("$package")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-servers: all present: ${packages[*]}"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        echo "install-servers: need root (or sudo) to install: ${missing[*]}" >&2
        exit 1
    fi
    sudo=(sudo)
fi

policy=/usr/sbin/policy-rc.d
made_policy=0
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# written by stratabench scripts/install-servers.sh; removed when it ends\nexit 101\n' \
        | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    made_policy=1
fi
cleanup() {
    if [ "$made_policy" -eq 1 ]; then
        "${sudo[@]}" rm -f "$policy"
    fi
}
trap cleanup EXIT

echo "install-servers: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

# Under systemd, policy-rc.d is not consulted by every unit; stop whatever
# the packages started so that no system server holds the default ports.
if [ -d /run/systemd/system ]; then
    for unit in redis-server memcached postgresql mariadb; do
        "${sudo[@]}" systemctl stop "$unit" >/dev/null 2>&1 || true
        "${sudo[@]}" systemctl disable "$unit" >/dev/null 2>&1 || true
    done
fi
echo "install-servers: done"
