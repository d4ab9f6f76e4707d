#!/usr/bin/env bash
# Installs the Debian 12 packages named that are missing (as root, or with
# sudo); nothing when all are present. Used by setup.sh and fuzz.sh.
# Usage: scripts/install-packages.sh WHO PACKAGE...   (WHO prefixes the note)
set -euo pipefail
who="$1"
shift
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "$who: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
