#!/usr/bin/env bash
# Installs the Debian packages that building, running and testing liblogosdelivery need.
# Idempotent: packages already present are skipped; nothing is installed when all are present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  clang libclang-rt-14-dev clang-format
  libuv1-dev libsodium-dev libsecp256k1-dev libssl-dev
  libprotobuf-c-dev protobuf-c-compiler libjansson-dev libmicrohttpd-dev
  libcmocka-dev libwslay-dev libsqlite3-dev libpq-dev postgresql nettle-dev
  libgmp-dev libcurl4-openssl-dev
  libc-ares-dev dnsmasq-base libminiupnpc-dev libnatpmp-dev miniupnpd nftables iproute2
  chromium
  dpkg-dev groff-base systemd curl
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
