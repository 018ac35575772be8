#!/bin/bash
# The guest side of one power-cut boot (see Tests/Kernel/powercut/run.py): mount the disk
# whose volatile cache the last cut dropped, check what is on it, then commit events
# until the host cuts the power.
#
#   guest.sh EVENT_SERVER_PORT BINARY load|final|run|final-run PRELOAD CA_FILE [BATCH]
#
# Check (every boot): mount (ext4 replays its journal), unmount, `e2fsck -fn`, mount again;
# `outbox export` (the gateway's own open of its store) and `PRAGMA integrity_check`.
# Results go to $RIG_SHARE/results, `checked` last. Then
#   load:  `outbox deliver` to the host's event server in the background and
#          `outbox enqueue --count 0` in the foreground, whose "SEQUENCE KEY" lines (each
#          printed after its commit returned) reach the host over the serial console;
#          the host kills QEMU at a random moment.
#   final: `outbox deliver --until-empty`, then `outbox export` once more.
#   run:   the door agent itself: hci0 on /dev/hvc0 (the host's virtual world, through
#          hci-attach, $HCI_ATTACH_BIN), then `beacon-gateway run` with the host's
#          $RIG_SHARE/gateway.toml, its log on the serial console (its `checkin` and
#          `checkout` lines, each printed after the event's commit returned, and
#          `scanning`); "power-cut: clock T" first, this guest's wall clock, so the host
#          can tell its offset. The host kills QEMU at a random moment.
#   final-run: as run, until every visit in the outbox is checked out (everyone has
#          left the door by then) or 150 s passed; SIGTERM; then as final.
# PRELOAD (run.py --mutant-no-fsync): a library LD_PRELOADed into the load's processes
# ("" for none). CA_FILE: the event server's private CA (HTTPS: the host is not loopback
# to the guest, and plain http goes to loopback only). BATCH: events per transaction (the
# agent's committer takes its whole waiting queue in one; 1 when nothing waits).
set -u
port=$1 binary=$2 mode=$3 preload=${4:-} ca_file=$5 batch=${6:-1}
results=$RIG_SHARE/results
state=/mnt/disk/state
mkdir -p "$results" /mnt/disk

say() { echo "power-cut: $* (uptime $(cut -d" " -f1 /proc/uptime) s)"; }
record() { echo "$2" >"$results/$1"; }

# virtio_blk and ext4 may be modules or built in.
modprobe virtio_blk 2>/dev/null
modprobe ext4 2>/dev/null
[ -b /dev/vda ] || { say "no /dev/vda"; record mount.rc 125; exit 125; }
# "write back": the kernel knows the disk has a volatile cache and sends it flushes.
record write-cache "$(cat /sys/block/vda/queue/write_cache)"

say "mount"
mount -t ext4 /dev/vda /mnt/disk 2>"$results/mount.err"
status=$?
record mount.rc $status
[ $status -eq 0 ] || { say "mount failed ($status)"; exit 3; }
umount /mnt/disk
e2fsck -fn /dev/vda >"$results/fsck.txt" 2>&1
record fsck.rc $?
mount -t ext4 /dev/vda /mnt/disk || { say "second mount failed"; record mount.rc 2; exit 3; }
record mount-options "$(awk '$1 == "/dev/vda" {print $4}' /proc/mounts)"

say "check"
if [ -e "$state/gateway.sqlite" ]; then
  "$binary" outbox export --state-dir "$state" >"$results/export.jsonl" 2>"$results/export.err"
  record export.rc $?
  sqlite3 "$state/gateway.sqlite" "PRAGMA integrity_check" >"$results/integrity.txt" 2>&1
  record integrity.rc $?
  # The sequence floor (gateway.sqlite-sequence): must lie above every sequence in the
  # outbox and every one acknowledged, and never go down from one check to the next.
  [ ! -e "$state/gateway.sqlite-sequence" ] || cp "$state/gateway.sqlite-sequence" "$results/floor.txt"
else
  record no-store "$(ls -la /mnt/disk 2>&1)"
fi
mkdir -p "$state"
record checked ok
say "checked"

cat >/tmp/gateway.toml <<EOF
[gateway]
id = "door-power-cut"
state_dir = "$state"

[server]
url = "https://$RIG_HOST:$port"
ca_file = "$ca_file"
timeout_s = 30
max_backoff_s = 1
EOF

drain_and_export() {
  "$binary" outbox deliver --config "$1" --until-empty --seconds 120 >"$results/drain.txt" 2>&1
  record drain.rc $?
  "$binary" outbox export --state-dir "$state" >"$results/export-final.jsonl" 2>"$results/export-final.err"
  record export-final.rc $?
  umount /mnt/disk
  say "final done"
}

if [ "$mode" = final ]; then
  drain_and_export /tmp/gateway.toml
  exit 0
fi

if [ "$mode" = run ] || [ "$mode" = final-run ]; then
  modprobe hci_uart || { say "modprobe hci_uart failed"; exit 4; }
  "${HCI_ATTACH_BIN:?}" /dev/hvc0 30 >/tmp/attach.out 2>&1 &
  # hci-attach prints "hci0 up" once the kernel's own init of the adapter went through.
  for _ in $(seq 1 800); do grep -qE "^hci0 (up|not up)" /tmp/attach.out && break; sleep 0.05; done
  say "$(grep -E "^hci0 (up|not up)" /tmp/attach.out || echo "hci-attach did not report")"
  config=$RIG_SHARE/gateway.toml
  echo "power-cut: clock $EPOCHREALTIME"
  if [ "$mode" = run ]; then
    [ -z "$preload" ] || export LD_PRELOAD=$preload
    exec "$binary" run --config "$config" 2>&1
  fi
  "$binary" run --config "$config" 2>&1 &
  agent=$!
  # Open visits: checkins less checkouts in the outbox (each checkout closes one visit).
  open_visits() {
    local rows
    rows=$("$binary" outbox export --state-dir "$state" 2>/dev/null) || { echo unknown; return; }
    echo $(( $(grep -c '"type": "checkin"' <<<"$rows") - $(grep -c '"type": "checkout"' <<<"$rows") ))
  }
  deadline=$(( $(date +%s) + 150 ))
  until [ "$(open_visits)" = 0 ] || [ "$(date +%s)" -ge "$deadline" ]; do sleep 1; done
  say "open visits $(open_visits)"
  kill -TERM "$agent"; wait "$agent"
  record run-final.rc $?
  drain_and_export "$config"
  exit 0
fi

LD_PRELOAD=$preload "$binary" outbox deliver --config /tmp/gateway.toml >/dev/null 2>"$results/deliver.err" &
say "load"
[ -z "$preload" ] || export LD_PRELOAD=$preload
exec "$binary" outbox enqueue --state-dir "$state" --count 0 --persons 12 --gateway door-power-cut --batch "$batch"
