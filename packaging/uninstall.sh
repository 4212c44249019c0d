#!/bin/bash
# Remove svr installed by install.sh.
#
#   sudo packaging/uninstall.sh [--prefix /usr] [--purge]
#   sudo DESTDIR=/tmp/stage packaging/uninstall.sh
#
# Stops and disables the service and removes the code, the wrappers, the
# service files and the logrotate file. The configuration (/etc/svr), the
# webroot, logs and state stay unless --purge is given. The service user is
# kept either way, since files it owns may remain; remove it with
# `userdel svr` once they are gone.
set -euo pipefail

PREFIX=/usr
PURGE=0
DESTDIR=${DESTDIR:-}

die () {
  echo "uninstall.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --destdir) DESTDIR=${2:?--destdir needs a directory}; shift 2 ;;
    --destdir=*) DESTDIR=${1#*=}; shift ;;
    --purge) PURGE=1; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1" ;;
  esac
done
[ "$(id -u)" = 0 ] || die "must be run as root"

stop_service () {
  [ -z "$DESTDIR" ] || return 0
  if [ -d /run/systemd/system ] && [ -f /lib/systemd/system/svr.service ]; then
    systemctl disable --now svr.service >/dev/null 2>&1 || true
  fi
  if [ -x /etc/init.d/svr ] && [ ! -d /run/systemd/system ]; then
    /etc/init.d/svr stop || true
    command -v update-rc.d >/dev/null && update-rc.d -f svr remove >/dev/null
  fi
  return 0
}

stop_service
rm -rf "$DESTDIR$PREFIX/lib/svr" "$DESTDIR$PREFIX/lib/svr.new" "$DESTDIR$PREFIX/lib/svr.old"
rm -f "$DESTDIR$PREFIX/bin/svr" "$DESTDIR$PREFIX/bin/svrpasswd"
rm -f "$DESTDIR/lib/systemd/system/svr.service" "$DESTDIR/etc/init.d/svr" "$DESTDIR/etc/logrotate.d/svr"
[ -z "$DESTDIR" ] && [ -d /run/systemd/system ] && systemctl daemon-reload
if [ "$PURGE" = 1 ]; then
  rm -rf "$DESTDIR/etc/svr" "$DESTDIR/etc/default/svr" "$DESTDIR/var/www/svr" \
    "$DESTDIR/var/log/svr" "$DESTDIR/var/lib/svr" "$DESTDIR/run/svr"
  echo "uninstall.sh: removed svr with its configuration, webroot, logs and state"
else
  echo "uninstall.sh: removed svr; kept /etc/svr, /etc/default/svr, /var/www/svr, /var/log/svr and /var/lib/svr (--purge removes them)"
fi
