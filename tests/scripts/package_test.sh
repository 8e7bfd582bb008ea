#!/usr/bin/env bash
# The Debian package: `cpack` builds it from the build folder; its contents, control data and
# systemd unit are checked (systemd-analyze verify in a scratch root holding the package and the
# system's units; systemd-analyze security for the hardening); then, as root on a machine without
# logosdelivery, it is installed with dpkg, the service is started and stopped (with systemctl
# when systemd runs, otherwise the unit's command by hand as the unit's user, in its working
# directory, with its environment file), and purged: nothing of it may remain.
#
# Usage: package_test.sh <build dir>
# Exit 77 (skipped) after the checks that need no installation when installing is not safe here
# (not root, or a logosdelivery package, user or file already present); LD_PACKAGE_INSTALL=0
# skips the installation too.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
node_pid=''
installed=0
cleanup() {
  [ -n "$node_pid" ] && kill "$node_pid" 2>/dev/null || true
  if [ $installed -eq 1 ]; then dpkg --purge logosdelivery >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- a plain install stays below its prefix (no absolute destination reaches the real /etc) ---
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "cmake --install"; }
outside=$(grep -v "^$work/prefix/" "$build/install_manifest.txt" || true)
[ -z "$outside" ] || fail "cmake --install --prefix wrote outside the prefix: $outside"
[ -f "$work/prefix/share/man/man1/logosdelivery.1" ] || fail "no man page in a plain install"

# ---- build ----------------------------------------------------------------------------------
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log" >&2; fail "cpack"; }
deb=$(ls "$work"/out/logosdelivery_*.deb)

# ---- contents and control data ----------------------------------------------------------------
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/logosdelivery ./usr/include/liblogosdelivery.h ./usr/include/liblogosdelivery_kernel.h \
         ./usr/share/man/man1/logosdelivery.1 ./usr/share/man/man3/liblogosdelivery.3 \
         ./usr/share/bash-completion/completions/logosdelivery ./usr/lib/systemd/system/logosdelivery.service \
         ./etc/logosdelivery/config.toml ./usr/share/doc/logosdelivery/examples/config.toml; do
  grep -qx -- "$f" <<<"$contents" || fail "$f not in the package"
done
grep -q '/liblogosdelivery\.so\.[0-9.]*$' <<<"$contents" || fail "no shared library"
grep -q '/pkgconfig/liblogosdelivery\.pc$' <<<"$contents" || fail "no pkg-config file"
grep -q "^Depends: adduser, libmicrohttpd12, libsqlite3-0, .*libuv1" <(dpkg-deb -f "$deb") || fail "Depends: $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -e "$deb" "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/logosdelivery/config.toml ] || fail "conffiles"
for s in postinst prerm postrm; do [ -x "$work/control/$s" ] || fail "$s"; sh -n "$work/control/$s"; done

# ---- the unit ---------------------------------------------------------------------------------
root=$work/root
dpkg-deb -x "$deb" "$root"
mkdir -p "$root/lib/systemd/system"
cp -a /lib/systemd/system/. "$root/lib/systemd/system/"
unit=/usr/lib/systemd/system/logosdelivery.service
out=$(cd "$work" && systemd-analyze verify --man=no --root="$root" "$unit" 2>&1) || fail "verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
security=$(systemd-analyze security --offline=true --root="$root" "$root$unit" 2>&1 || true)
level=$(sed -n 's/.*Overall exposure level for logosdelivery.service: \([0-9.]*\).*/\1/p' <<<"$security")
[ -n "$level" ] || fail "no exposure level: $security"
awk -v l="$level" 'BEGIN { exit !(l <= 2.0) }' || fail "exposure level $level > 2.0:
$security"
for property in 'ProtectSystem=strict' 'StateDirectory=logosdelivery' 'User=logosdelivery' 'NoNewPrivileges=yes' \
                'ProtectHome=yes' 'PrivateTmp=yes' 'CapabilityBoundingSet=$'; do
  grep -q "^$property" "$root$unit" || fail "the unit lacks $property"
done
if grep -q '^ReadWritePaths=' "$root$unit"; then fail "the unit may write outside its state directory"; fi
echo "package: $(basename "$deb") built; contents, control data and unit checked (exposure $level)"

# ---- install, run, purge ------------------------------------------------------------------------
why=''
[ "${LD_PACKAGE_INSTALL:-1}" = 0 ] && why='LD_PACKAGE_INSTALL=0'
[ -z "$why" ] && [ "$(id -u)" -ne 0 ] && why='not root'
[ -z "$why" ] && dpkg -s logosdelivery >/dev/null 2>&1 && why='a logosdelivery package is installed'
[ -z "$why" ] && getent passwd logosdelivery >/dev/null && why='a user logosdelivery exists'
for p in /usr/bin/logosdelivery /etc/logosdelivery /var/lib/logosdelivery; do
  [ -z "$why" ] && [ -e "$p" ] && why="$p exists"
done
if [ -n "$why" ]; then
  echo "package: not installed here ($why)"
  exit 77
fi

dpkg_retry() { # dpkg refuses at once while apt holds its lock
  for _ in $(seq 60); do
    if out=$(dpkg "$@" 2>&1); then return 0; fi
    grep -q 'lock' <<<"$out" || { echo "$out" >&2; return 1; }
    sleep 1
  done
  echo "$out" >&2; return 1
}
installed=1
dpkg_retry -i "$deb" || fail "dpkg -i"
getent passwd logosdelivery >/dev/null || fail "no user logosdelivery"
[ "$(stat -c %U:%a /var/lib/logosdelivery)" = logosdelivery:750 ] || fail "state directory $(stat -c %U:%a /var/lib/logosdelivery)"
grep -qE '^WAKUNODE2_NODEKEY=[0-9a-f]{64}$' /var/lib/logosdelivery/nodekey.env || fail "no node key"
[ "$(stat -c %U:%a /var/lib/logosdelivery/nodekey.env)" = logosdelivery:600 ] || fail "node key readable by others"
out=$(cd "$work" && systemd-analyze verify --man=no "$unit" 2>&1) || fail "verify installed: $out"
[ -z "$out" ] || fail "systemd-analyze verify (installed): $out"
man -w logosdelivery >/dev/null 2>&1 || [ -f /usr/share/man/man1/logosdelivery.1 ] || fail "man page not installed"

if [ -d /run/systemd/system ]; then
  systemctl start logosdelivery.service
  for _ in $(seq 100); do systemctl is-active --quiet logosdelivery.service && break; sleep 0.1; done
  systemctl is-active --quiet logosdelivery.service || fail "the service did not start"
  systemctl stop logosdelivery.service
  how='systemctl start/stop'
else
  # The unit's command by hand: its user, working directory and environment file; ports moved to
  # free ones so that the test never meets another node.
  log=$work/node.log
  (cd /var/lib/logosdelivery && set -a && . ./nodekey.env && set +a &&
     exec setpriv --reuid=logosdelivery --regid=logosdelivery --init-groups --inh-caps=-all /usr/bin/logosdelivery --config-file=/etc/logosdelivery/config.toml \
       --tcp-port=0 --rest-port=0 --metrics-server-port=0 >"$log" 2>&1) &
  node_pid=$!
  url=''
  for _ in $(seq 300); do
    url=$(sed -n 's|.*REST service started at \(http://127.0.0.1:[0-9]*\)/.*|\1|p' "$log" | head -1)
    [ -n "$url" ] && grep -q 'Node setup complete' "$log" && break
    kill -0 "$node_pid" 2>/dev/null || { cat "$log" >&2; fail "the node exited"; }
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$log" >&2; fail "no REST URL logged"; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" = 200 ] || fail "/health"
  curl -s "$url/" | grep -q '<title>logosdelivery status</title>' || fail "status page"
  key=$(sed -n 's/^WAKUNODE2_NODEKEY=//p' /var/lib/logosdelivery/nodekey.env)
  [ -n "$key" ]
  [ -f /var/lib/logosdelivery/store.sqlite3 ] || fail "no store database in the state directory"
  [ "$(stat -c %U /var/lib/logosdelivery/store.sqlite3)" = logosdelivery ] || fail "store owner"
  kill -TERM "$node_pid"
  wait "$node_pid" && rc=0 || rc=$?
  node_pid=''
  [ $rc -eq 0 ] || { cat "$log" >&2; fail "the node exited with $rc after SIGTERM"; }
  how='the unit command by hand as user logosdelivery'
fi

dpkg_retry --purge logosdelivery || fail "dpkg --purge"
installed=0
for p in /usr/bin/logosdelivery /etc/logosdelivery /var/lib/logosdelivery "$unit" \
         /usr/share/man/man1/logosdelivery.1; do
  [ ! -e "$p" ] || fail "$p left after purge"
done
getent passwd logosdelivery >/dev/null && fail "user logosdelivery left after purge"
getent group logosdelivery >/dev/null && fail "group logosdelivery left after purge"
echo "package: installed, started and stopped ($how), purged without a trace"
