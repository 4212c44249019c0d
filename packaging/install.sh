#!/bin/bash
# Install svr as a system service, from this source tree.
#
#   sudo packaging/install.sh [--prefix /usr] [--user svr] [--init auto|systemd|sysv]
#                             [--no-start]
#   sudo DESTDIR=/tmp/stage packaging/install.sh      # staged: nothing enabled or started
#
# Layout (with the default prefix):
#   /usr/lib/svr              code and production node_modules, root-owned, read-only to the service
#   /usr/bin/svr, svrpasswd   wrappers that default to /etc/svr/config.json
#   /etc/svr/config.json      root:svr 0640, never overwritten; config.json.dist shows the shipped one
#   /etc/svr/serverSideScript.js, /etc/svr/mods/
#   /etc/svr/temp             the server root's temp/, owned by the service user (0700)
#   /var/www/svr              the webroot, filled only when it does not exist yet
#   /var/log/svr, /var/lib/svr  log and state directories, owned by the service user
#   the systemd unit where systemd runs, else the init.d script; /etc/logrotate.d/svr
#
# Running it again upgrades the code and leaves config, content, logs and
# state as they are.
set -euo pipefail

PREFIX=/usr
SVR_USER=svr
INIT=auto
START=1
DESTDIR=${DESTDIR:-}

usage () {
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

die () {
  echo "install.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --destdir) DESTDIR=${2:?--destdir needs a directory}; shift 2 ;;
    --destdir=*) DESTDIR=${1#*=}; shift ;;
    --user) SVR_USER=${2:?--user needs a name}; shift 2 ;;
    --user=*) SVR_USER=${1#*=}; shift ;;
    --init) INIT=${2:?--init needs auto, systemd or sysv}; shift 2 ;;
    --init=*) INIT=${1#*=}; shift ;;
    --no-start) START=0; shift ;;
    -h|--help) usage 0 ;;
    *) echo "install.sh: unknown option $1" >&2; usage 2 ;;
  esac
done

case "$INIT" in auto|systemd|sysv) ;; *) die "--init must be auto, systemd or sysv, not '$INIT'" ;; esac
case "$PREFIX" in /*) ;; *) die "--prefix must be an absolute path" ;; esac
[ "$(id -u)" = 0 ] || die "must be run as root (it creates the service user and sets owners)"

SRC=$(cd "$(dirname "$0")/.." && pwd)
CODE=$PREFIX/lib/svr
BIN=$PREFIX/bin
ETC=/etc/svr
WEBROOT=/var/www/svr
LOGDIR=/var/log/svr
STATEDIR=/var/lib/svr

NODE=$(command -v node) || die "node not found; install Node.js 20 or newer first"
command -v npm >/dev/null || die "npm not found; install it with Node.js"
NODE_MAJOR=$("$NODE" -p 'process.versions.node.split(".")[0]')
[ "$NODE_MAJOR" -ge 20 ] || die "Node.js 20 or newer needed, found $("$NODE" --version)"

log () {
  echo "install.sh: $*"
}

create_user () {
  if getent passwd "$SVR_USER" >/dev/null; then
    return
  fi
  local shell=/usr/sbin/nologin
  [ -x "$shell" ] || shell=/bin/false
  useradd --system --user-group --home-dir "$STATEDIR" --no-create-home \
    --shell "$shell" --comment "svr web server" "$SVR_USER"
  log "created system user $SVR_USER"
}

# install -d sets owner and mode also on a directory that already exists,
# which is what makes a second run give the same result.
dir () {
  install -d -o "$2" -g "$3" -m "$4" "$DESTDIR$1"
}

# Copy the code into a fresh directory beside the old one, install the
# production dependencies there, then swap: a running service keeps its
# files until it restarts, and a failed npm ci leaves the old code in place.
install_code () {
  local target=$DESTDIR$CODE
  local next=$target.new
  rm -rf "$next"
  mkdir -p "$next"
  cp -R "$SRC/svr.js" "$SRC/lib" "$SRC/package.json" "$SRC/package-lock.json" \
    "$SRC/README.md" "$SRC/HISTORY.md" "$SRC/docs" "$next/"
  [ -d "$SRC/bin" ] && cp -R "$SRC/bin" "$next/"
  (cd "$next" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) ||
    { rm -rf "$next"; die "npm ci --omit=dev failed; the installed code is unchanged"; }
  chown -R root:root "$next"
  chmod -R u=rwX,go=rX "$next"
  chmod 0755 "$next/svr.js"
  if [ -d "$target" ]; then
    rm -rf "$target.old"
    mv "$target" "$target.old"
  fi
  mv "$next" "$target"
  rm -rf "$target.old"
  log "code in $CODE"
}

# A wrapper that adds --config /etc/svr/config.json unless one is given.
install_wrapper () {
  local name=$1 script=$2
  [ -f "$DESTDIR$CODE/$script" ] || return 0
  local tmp
  tmp=$(mktemp)
  cat >"$tmp" <<WRAPPER
#!/bin/sh
for arg in "\$@"; do
  case "\$arg" in --config|--config=*) exec "$NODE" "$CODE/$script" "\$@" ;; esac
done
exec "$NODE" "$CODE/$script" --config "$ETC/config.json" "\$@"
WRAPPER
  install -o root -g root -m 0755 "$tmp" "$DESTDIR$BIN/$name"
  rm -f "$tmp"
}

# Conffiles: installed once, never overwritten on upgrade.
install_once () {
  local from=$1 to=$2 mode=$3
  if [ -e "$DESTDIR$to" ]; then
    log "kept existing $to"
  else
    install -o root -g "$SVR_USER" -m "$mode" "$from" "$DESTDIR$to"
  fi
}

install_config () {
  dir "$ETC" root "$SVR_USER" 0750
  install_once "$SRC/packaging/config.json" "$ETC/config.json" 0640
  install -o root -g "$SVR_USER" -m 0640 "$SRC/packaging/config.json" "$DESTDIR$ETC/config.json.dist"
  install_once "$SRC/serverSideScript.js" "$ETC/serverSideScript.js" 0640
  dir "$ETC/mods" root "$SVR_USER" 0750
  # The server root's temp/: SVR.JS 3.x scripts keep files in their
  # __dirname, which is this directory, and 3.x mods are unpacked here. The
  # only place under /etc/svr the service may write.
  dir "$ETC/temp" "$SVR_USER" "$SVR_USER" 0700
}

install_webroot () {
  if [ -d "$DESTDIR$WEBROOT" ]; then
    log "kept existing webroot $WEBROOT"
    return
  fi
  dir "$WEBROOT" root root 0755
  cp -R "$SRC/webroot/." "$DESTDIR$WEBROOT/"
  chown -R root:root "$DESTDIR$WEBROOT"
  chmod -R u=rwX,go=rX "$DESTDIR$WEBROOT"
}

# The unit names the service user and node's path as found here.
install_systemd_unit () {
  local tmp
  tmp=$(mktemp)
  sed -e "s|^User=svr$|User=$SVR_USER|" -e "s|^Group=svr$|Group=$SVR_USER|" \
    -e "s|^ExecStart=/usr/bin/node /usr/lib/svr/|ExecStart=$NODE $CODE/|" \
    "$SRC/packaging/systemd/svr.service" >"$tmp"
  dir /lib/systemd/system root root 0755
  install -o root -g root -m 0644 "$tmp" "$DESTDIR/lib/systemd/system/svr.service"
  rm -f "$tmp"
}

install_sysv_script () {
  dir /etc/init.d root root 0755
  install -o root -g root -m 0755 "$SRC/packaging/init.d/svr" "$DESTDIR/etc/init.d/svr"
  dir /etc/default root root 0755
  if [ ! -e "$DESTDIR/etc/default/svr" ]; then
    local tmp
    tmp=$(mktemp)
    cat >"$tmp" <<DEFAULTS
# Settings for /etc/init.d/svr (machines without systemd).
NODE=$NODE
SVR_HOME=$CODE
CONFIG=$ETC/config.json
SVR_USER=$SVR_USER
SVR_GROUP=$SVR_USER
# Keep longer than the config's shutdownTimeout.
STOP_TIMEOUT=30
DEFAULTS
    install -o root -g root -m 0644 "$tmp" "$DESTDIR/etc/default/svr"
    rm -f "$tmp"
  fi
}

install_logrotate () {
  [ -f "$SRC/packaging/logrotate/svr" ] || return 0
  dir /etc/logrotate.d root root 0755
  install -o root -g root -m 0644 "$SRC/packaging/logrotate/svr" "$DESTDIR/etc/logrotate.d/svr"
}

systemd_runs () {
  [ -d /run/systemd/system ]
}

enable_service () {
  if [ -n "$DESTDIR" ]; then
    log "staged in $DESTDIR; nothing enabled or started"
  elif [ "$INIT" = systemd ]; then
    systemctl daemon-reload
    systemctl enable svr.service >/dev/null
    if [ "$START" = 1 ]; then
      systemctl restart svr.service
      log "svr.service enabled and (re)started"
    else
      log "svr.service enabled; start it with: systemctl start svr"
    fi
  else
    command -v update-rc.d >/dev/null && update-rc.d svr defaults >/dev/null
    if [ "$START" = 1 ]; then
      /etc/init.d/svr restart
    else
      log "start it with: /etc/init.d/svr start"
    fi
  fi
}

main () {
  if [ "$INIT" = auto ] && [ -z "$DESTDIR" ]; then
    if systemd_runs; then INIT=systemd; else INIT=sysv; fi
  fi
  create_user
  mkdir -p "$DESTDIR$PREFIX/lib" "$DESTDIR$BIN"
  install_code
  install_wrapper svr svr.js
  install_wrapper svrpasswd bin/svrpasswd.js
  install_config
  install_webroot
  dir "$LOGDIR" "$SVR_USER" "$SVR_USER" 0750
  dir "$STATEDIR" "$SVR_USER" "$SVR_USER" 0750
  # A staged tree carries both, for whoever packages it to choose.
  if [ "$INIT" = systemd ] || [ "$INIT" = auto ]; then install_systemd_unit; fi
  if [ "$INIT" = sysv ] || [ "$INIT" = auto ]; then install_sysv_script; fi
  install_logrotate
  enable_service
}

main
