#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# DOC: the config golden files of tests/conf through the daemon itself
# (`fibd -n [-v] -c FILE`): exit status, effective config, file:line:column
# messages. Also `fibd -n` on the shipped example and on a missing file.
: "${srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
FIBD=${FIBD:-./daemon/fibd}
sh "$srcdir/tests/conf/fibd_check.sh" "$FIBD" "$srcdir/tests/conf" || exit 1
"$FIBD" -n -c "$srcdir/systemd/fibd.yaml" || { echo "FAIL: example config refused"; exit 1; }
out=$("$FIBD" -n -c /nonexistent/fibd.yaml 2>&1)
[ $? = 1 ] || { echo "FAIL: missing file must exit 1"; exit 1; }
echo "$out" | grep -q 'nonexistent/fibd.yaml' || { echo "FAIL: no file name in: $out"; exit 1; }
echo "ok: daemon_conf"
