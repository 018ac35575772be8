#!/usr/bin/env bash
# Runs INSIDE the rig's guest (scripts/qemu/rig run ... -- bash Tests/Kernel/guest-tests.sh),
# from the repository root, with /dev/hvc0 piped to the virtual world's H4 server on the
# host. It only exercises the real kernel and records what happened as files under
# $RIG_SHARE/results (the host-side pytest, Tests/Kernel/test_kernel_rig.py, asserts on
# them): every step runs even when an earlier one misbehaved, so one boot answers every
# test. Exit status non-zero only when the guest itself could not be set up.
# The aarch64 guest's programs are bash, libgpiod 2's tools and busybox (see
# scripts/qemu/README.md): nothing here may need more (no GNU options, no date +%N).
set -uo pipefail

out=${RIG_SHARE:?run me through scripts/qemu/rig}/results
gateway=${BEACON_GATEWAY_BIN:-.build/debug/beacon-gateway}
attach=${HCI_ATTACH_BIN:-.build/qemu/bin/hci-attach}
scan_seconds=${KERNEL_SCAN_SECONDS:-10}
rm -rf "$out"; mkdir -p "$out"

# Milliseconds since this script started (bash's clock: busybox's date has no %N).
started=${EPOCHREALTIME/./}
step() { echo "== guest $(( (${EPOCHREALTIME/./} - started) / 1000 )) ms: $*"; }
# record NAME COMMAND...: stdout, stderr and exit status of COMMAND into NAME.{out,err,rc}.
record() {
  local name=$1; shift
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
}
# wait_for SECONDS COMMAND...: poll COMMAND every 50 ms until it succeeds (COMMAND is run
# afresh each time: pass a function, not a "$(...)" that would be expanded once).
wait_for() {
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

echo "$(uname -r)" >"$out/kernel"
echo "$(uname -m)" >"$out/machine"

# --- Bluetooth: hci0 = the world's controller, through /dev/hvc0 and N_HCI --------------

step "hci0 over /dev/hvc0 (N_HCI, H4)"
modprobe hci_uart || { echo "modprobe hci_uart failed"; exit 1; }
"$attach" /dev/hvc0 30 >"$out/attach.out" 2>"$out/attach.err" &
attach_pid=$!
# hci-attach prints "hci0 up" once the kernel's own init went through.
wait_for 40 grep -qE "^hci0 (up|not up)" "$out/attach.out" || echo "hci-attach did not report" >>"$out/attach.err"
cat "$out/attach.out"

step "scan --transport hci9 (absent)"
record hci9 "$gateway" scan --transport hci9 --seconds 1 --json

step "scan --transport hci0 for ${scan_seconds} s"
"$gateway" scan --transport hci0 --seconds "$scan_seconds" --json >"$out/scan.out" 2>"$out/scan.err" &
scan_pid=$!
# While it holds the user channel (it prints live lines once scanning), a second one must
# be refused.
if wait_for 60 test -s "$out/scan.out"; then
  step "second scan on hci0 while the first holds the user channel"
  record busy "$gateway" scan --transport hci0 --seconds 2 --json
else
  echo "the first scan printed nothing within 60 s" >"$out/busy.err"
fi
wait "$scan_pid"; echo $? >"$out/scan.rc"
step "scan ended (exit $(cat "$out/scan.rc"))"
# Closing the user channel hands the adapter back to the kernel.
ls /sys/class/bluetooth >"$out/adapters-after-scan"

# --- GPIO: a gpio-sim chip with three named lines, driven with libgpiod 2 ---------------

step "gpio-sim chip with lines green, amber, red"
gpio() { echo "$1 $2" >>"$out/gpio.txt"; }
: >"$out/gpio.txt"
modprobe configfs 2>/dev/null
grep -qs " /sys/kernel/config " /proc/mounts || mount -t configfs none /sys/kernel/config
modprobe gpio-sim
sim=/sys/kernel/config/gpio-sim/leds
if mkdir "$sim" && mkdir "$sim/bank0" && echo 3 >"$sim/bank0/num_lines"; then
  line=0
  for name in green amber red; do
    mkdir "$sim/bank0/line$line" && echo "$name" >"$sim/bank0/line$line/name"
    line=$((line + 1))
  done
  echo 1 >"$sim/live"
fi
chip=$(cat "$sim/bank0/chip_name" 2>/dev/null)
pads=/sys/devices/platform/$(cat "$sim/dev_name" 2>/dev/null)/$chip
gpio chip "${chip:-none}"
echo "$chip" >"$out/gpiochip"
pad() { cat "$pads/sim_gpio$1/value" 2>/dev/null || echo none; }
pad_is() { [ "$(pad "$1")" = "$2" ]; }
gpio_used() { gpioinfo -c "$chip" "$1" 2>/dev/null | grep -qw consumer; }

if [ -n "$chip" ]; then
  gpioinfo -c "$chip" >"$out/gpioinfo.out" 2>&1

  # An output held by gpioset shows on the simulated pad.
  gpioset -c "$chip" green=1 2>"$out/gpioset-hold.err" &
  holder=$!
  wait_for 20 pad_is 0 1
  gpio green-held-high "$(pad 0)"
  # The same line requested twice: the kernel refuses (EBUSY).
  step "gpio: green requested twice"
  record gpio-busy gpioset -c "$chip" -t0 green=0
  kill "$holder"; wait "$holder" 2>/dev/null

  step "gpio: pulls and active low"
  # An input reads the simulated pull: pull-up reads 1, pull-down 0.
  echo pull-up >"$pads/sim_gpio1/pull"
  gpio amber-pull-up "$(gpioget -c "$chip" --numeric amber 2>&1)"
  # active_low (as `[leds] active_low = true` will be): logical 1 drives the pulled-up
  # pad low.
  gpioset -c "$chip" -l amber=1 2>/dev/null &
  holder=$!
  wait_for 20 pad_is 1 0
  gpio amber-active-low-on "$(pad 1)"
  kill "$holder"; wait "$holder" 2>/dev/null
  echo pull-down >"$pads/sim_gpio1/pull"
  gpio amber-pull-down "$(gpioget -c "$chip" --numeric amber 2>&1)"
fi

# --- LEDs and run: beacon-gateway on hci0 with [leds] on that chip -----------------------
# An unknown subcommand's --help prints the top-level help with exit 0: look at the usage.
supports() { "$gateway" "$1" --help 2>&1 | grep -q "USAGE: beacon-gateway $1"; }
# sample_pads NAME: "seconds green amber red" into $samples/NAME every ~20 ms until
# killed, with builtins only (read -t on a pipe nobody writes is a sleep without a fork),
# so the samples stay dense enough under TCG to see the 100 ms blinks of docs/leds.md.
# The three pads are three reads; one that straddles a change of pattern would mix the
# old and the new, so a sample counts only when a second read of all three agrees.
# $samples is in the guest's memory (tmpfs), copied to $out by stop_sampler: appended to
# $out (9p, no cache), every sample is a round trip through QEMU to the host, and on a
# loaded host one slow round trip stalls the sampler (the tests fail a 0.3 s stall).
samples=/dev/shm/pad-samples
mkdir -p "$samples"
sample_pads() {
  local g a r g2 a2 r2 tick
  exec {tick}<> <(:)
  while :; do
    read -r g <"$pads/sim_gpio0/value"; read -r a <"$pads/sim_gpio1/value"; read -r r <"$pads/sim_gpio2/value"
    read -r g2 <"$pads/sim_gpio0/value"; read -r a2 <"$pads/sim_gpio1/value"; read -r r2 <"$pads/sim_gpio2/value"
    [ "$g$a$r" = "$g2$a2$r2" ] && echo "$EPOCHREALTIME $g $a $r"
    read -r -t 0.02 -u "$tick" _
  done >"$samples/$1"
}
# start_sampler NAME: sample_pads NAME in the background (its pid in $sampler), returning
# once it has written its first sample, so that a pattern shown right after (the lamp
# test's 300 ms) cannot pass before a sampler still starting in a slow guest.
start_sampler() {
  sample_pads "$1" & sampler=$!
  # Ahead of the agent and of the tests' own polling (a fork of grep every 50 ms under
  # TCG) in the guest's one CPU: it sleeps 20 ms a turn, so it takes little, and a stall
  # of the sampler says nothing about the agent (the tests fail it as such).
  renice -n -10 -p "$sampler" >/dev/null 2>&1 || echo "the pads sampler runs at the default priority (no renice)"
  wait_for 20 test -s "$samples/$1"
}
# stop_sampler NAME PID: ends the sampler once it has written a sample begun after this
# call (the pads as the program just ended left them), at most ~5 s later, and copies its
# samples to $out/NAME. Killing it at once could drop that last state under a slow
# guest. A sample is stamped when written, after its reads: the last sample was read
# after this call once the one before it was written after it.
stop_sampler() {
  local name=$1 pid=$2 ended=${EPOCHREALTIME/./} before tries=0
  while ((tries++ < 250)); do
    before=$(tail -n 2 "$samples/$name" | head -n 1)
    set -- "$name" "$pid" $before
    [ $# -eq 6 ] && (( ${3/./} > ended )) && break
    sleep 0.02
  done
  kill "$pid"; wait "$pid" 2>/dev/null
  cp "$samples/$name" "$out/$name"
}
leds_chip=""
if ! supports leds; then
  echo "LED support not in this build" >"$out/leds.skip"
elif [ -z "$chip" ]; then
  echo "no gpio-sim chip" >"$out/leds.skip"
else
  leds_chip=$chip
  step "leds test on $chip"
  bash Tests/Kernel/run-config.sh /tmp/leds-state "$chip" >"$out/leds-config.toml"
  start_sampler leds-test.samples
  record leds-test timeout 60 "$gateway" leds test --config "$out/leds-config.toml" --seconds 0.5
  stop_sampler leds-test.samples "$sampler"
  # A line held by someone else: the promised message, no crash.
  step "leds test with the red line held by gpioset"
  gpioset -c "$chip" red=0 2>/dev/null & holder=$!
  wait_for 20 gpio_used red
  record leds-busy timeout 60 "$gateway" leds test --config "$out/leds-config.toml" --seconds 0.5
  kill "$holder"; wait "$holder" 2>/dev/null
fi

# ask_host WHAT: ask the host (rig_session.py watches the share) to do WHAT to the world's
# controller, and wait for its answer. "stop": the world drops its H4 client (the virtio
# console behind hvc0) and refuses it until "start". QEMU's chardev reconnects by itself
# (scripts/qemu/rig: reconnect=1); meanwhile hci0 stays registered and the bytes the
# kernel writes are dropped, so the agent only learns of it when a command times out.
ask_host() {
  echo "$EPOCHREALTIME" >"$out/controller-$1.request"
  wait_for 20 test -s "$out/controller-$1.done"
}
# Green lit and red dark in every sample of the sampler's last 0.5 s (the newest at most
# 1 s old). Two pad reads (pad_is 0 1 && pad_is 2 0, forks ~100 ms apart under TCG) were
# two moments, and one moment is not steady: a decision's green blink over a dark phase
# of red's 4 Hz blink could pass for it.
green_steady() {
  local now=${EPOCHREALTIME/./} newest="" lines i
  mapfile -t lines < <(tail -n 60 "$samples/run.samples")
  for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
    set -- ${lines[i]}
    [ $# -eq 4 ] && [ "$2 $4" = "1 0" ] || return 1
    [ -n "$newest" ] || newest=${1/./}
    (( now - newest <= 1000000 )) || return 1
    (( newest - ${1/./} >= 500000 )) && return 0
  done
  return 1
}
# Red lit in one of the sampler's last ~0.3 s of samples: polling the pad itself (a fork
# or two per look, ~250 ms apart under TCG) can alias with a 4 Hz blink and see only its
# dark half.
red_lit() { tail -n 15 "$samples/run.samples" | grep -q ' 1$'; }
# controller_outage: while `run` scans on hci0, take the controller away until the red LED
# has blinked for a few seconds, then give it back and wait for steady green. The times
# (guest clock, as the samples) go to controller-outage.txt for the host-side test.
controller_outage() {
  local times=$out/controller-outage.txt
  : >"$times"
  # Scanning and settled (the lamp test is over, green is on) before the outage.
  wait_for 60 green_steady || { echo "no steady green before the outage" >>"$times"; return; }
  sleep 2
  step "controller outage: stop the world's controller"
  echo "stopped $EPOCHREALTIME" >>"$times"
  ask_host stop || { echo "the host did not stop the controller" >>"$times"; return; }
  # hci0 stays registered and silent: the agent notices at its next probe, within probe
  # interval + command timeout (10 s + 2 s), and resets it (timing out) with backoff.
  if wait_for 20 red_lit; then echo "red $EPOCHREALTIME" >>"$times"; fi
  # After three resets in a row time out (~8 s), the agent gives up on resets, closes the
  # user channel and reopens it. The kernel sends its own Reset on that close and waits
  # ~2 s for it to time out; red must keep blinking meanwhile (the host-side test reads
  # the "reopen=yes" line's time from run.err). Given back a few seconds after that.
  step "controller outage: red lit; waiting for the agent to reopen hci0"
  if wait_for 40 grep -q "reopen=yes" "$out/run.err"; then echo "reopening $EPOCHREALTIME" >>"$times"; fi
  step "controller outage: hci0 reopening; blinking for 4 s"
  sleep 4
  echo "restarted $EPOCHREALTIME" >>"$times"
  ask_host start || { echo "the host did not restart the controller" >>"$times"; return; }
  step "controller outage: controller back; waiting for steady green"
  if wait_for 30 green_steady; then echo "recovered $EPOCHREALTIME" >>"$times"; fi
  step "controller outage: over"
}

# run_for SECONDS COMMAND...: COMMAND, sent SIGTERM (the way systemd ends the service)
# after SECONDS unless it ended before; its own exit status.
run_for() {
  local seconds=$1 pid timer status; shift
  "$@" & pid=$!
  { sleep "$seconds"; kill -TERM "$pid" 2>/dev/null; } & timer=$!
  wait "$pid"; status=$?
  kill "$timer" 2>/dev/null; wait "$timer" 2>/dev/null
  return "$status"
}

if ! supports run; then
  echo "run not in this build" >"$out/run.skip"
else
  run_seconds=${RUN_SECONDS:-40}
  # The outage needs a steady stretch before it, up to ~30 s itself (detection, three
  # timed-out resets, the reopen), and time after it for the walker's decisions.
  [ -z "$leds_chip" ] || run_seconds=${RUN_SECONDS:-80}
  step "run on hci0 for ${run_seconds} s"
  bash Tests/Kernel/run-config.sh /tmp/run-state "$leds_chip" >"$out/run-config.toml"
  record check-config "$gateway" check-config --config "$out/run-config.toml"
  [ -z "$leds_chip" ] || start_sampler run.samples
  # The capture records each report at the time presence counts it (the kernel's stamp).
  record run run_for "$run_seconds" "$gateway" run --config "$out/run-config.toml" --capture "$out/run.btsnoop" &
  runner=$!
  [ -z "$leds_chip" ] || controller_outage
  wait "$runner"
  [ -z "$leds_chip" ] || stop_sampler run.samples "$sampler"
  record outbox "$gateway" outbox list --config "$out/run-config.toml" --state all --json
  step "run ended (exit $(cat "$out/run.rc"))"
fi

# --- Disk trouble: run with its state directory on a full tmpfs ------------------------
# The store cannot even be created: the agent scans on, amber blinks at 4 Hz
# (docs/leds.md) and one line says why, until space is freed; then one line says events
# are stored again and amber goes dark. The times (guest clock, as the samples) go to
# disk-trouble.txt for the host-side test.
disk_trouble_run() {
  local state=/tmp/full-state times=$out/disk-trouble.txt runner
  : >"$times"
  mkdir -p "$state"
  if ! mount -t tmpfs -o size=1m tmpfs "$state"; then echo "cannot mount a tmpfs" >"$out/disk.skip"; return; fi
  dd if=/dev/zero of="$state/filler" bs=4096 2>/dev/null
  bash Tests/Kernel/run-config.sh "$state" "$leds_chip" >"$out/disk-config.toml"
  step "run with a full state directory"
  start_sampler disk.samples
  "$gateway" run --config "$out/disk-config.toml" >"$out/disk.out" 2>"$out/disk.err" & runner=$!
  if wait_for 30 grep -q "events cannot be stored" "$out/disk.err"; then echo "full $EPOCHREALTIME" >>"$times"; fi
  sleep 4
  rm -f "$state/filler"
  echo "freed $EPOCHREALTIME" >>"$times"
  step "disk trouble: space freed; waiting for the store"
  if wait_for 40 grep -q "events are stored again" "$out/disk.err"; then echo "recovered $EPOCHREALTIME" >>"$times"; fi
  # Amber dark after the recovery: watched for a while, then the agent is stopped the way
  # systemd stops it. The recovery ends the run, not a fixed length from its start: the
  # store's retries back off (1 s, doubling), and a slow start that missed one left too
  # little of a 30 s run after the recovery (or none).
  sleep "${DISK_AFTER_SECONDS:-8}"
  kill -TERM "$runner"; wait "$runner"; echo $? >"$out/disk.rc"
  stop_sampler disk.samples "$sampler"
  umount "$state"
  step "disk trouble run ended (exit $(cat "$out/disk.rc"))"
}
# with_run_and_leds NAME FUNCTION: FUNCTION, or NAME.skip saying why it cannot run.
with_run_and_leds() {
  if ! supports run; then
    echo "run not in this build" >"$out/$1.skip"
  elif [ -z "$leds_chip" ]; then
    echo "no LEDs to watch" >"$out/$1.skip"
  else
    "$2"
  fi
}
with_run_and_leds disk disk_trouble_run

# --- Disk trouble: the state directory's ext4 goes read-only under the running agent ----
# An ext4 error with errors=remount-ro (the kernel's own remount, which a file open for
# writing does not prevent; triggered through /sys/fs/ext4/DEV/trigger_fs_error). The agent
# scans on and holds its decisions, amber blinks at 4 Hz, the log says I/O error, then
# read-only once the store is reopened. On 7.x kernels the file system is "emergency_ro"
# (new files fail with EROFS, statvfs still says read-write) and `mount -o remount,rw`
# does not clear it: only an unmount does, so
# the agent is stopped (it counts the decisions it still holds), the file system checked
# and mounted again, and the events stored before the error must all be there, in order.
# The times (guest clock) go to readonly.txt for the host-side test.
stored_rows() { "$gateway" outbox list --state-dir "$1" --state all --json 2>/dev/null | grep -c sequence; }
has_stored() { [ "$(stored_rows "$1")" -ge 1 ]; }
readonly_run() {
  local image=/tmp/ro-state.img state=/tmp/ro-state times=$out/readonly.txt dev pid
  : >"$times"
  # Tools of this host's that the aarch64 guest cannot execute: skipped, not failed.
  for tool in mkfs.ext4 e2fsck losetup; do
    "$tool" -V >/dev/null 2>&1 || { echo "$tool does not run in this guest" >"$out/readonly.skip"; return; }
  done
  modprobe loop 2>/dev/null; modprobe ext4 2>/dev/null
  truncate -s 64M "$image"
  mkfs.ext4 -q -F "$image" || { echo "cannot make an ext4 image" >"$out/readonly.skip"; return; }
  dev=$(losetup -f --show "$image") || { echo "no loop device" >"$out/readonly.skip"; return; }
  mkdir -p "$state"
  if ! mount -t ext4 -o errors=remount-ro "$dev" "$state"; then
    echo "cannot mount ext4 on $dev" >"$out/readonly.skip"; losetup -d "$dev"; return
  fi
  bash Tests/Kernel/run-config.sh "$state" "$leds_chip" >"$out/readonly-config.toml"
  step "run with its state directory on ext4 ($dev, errors=remount-ro)"
  start_sampler readonly.samples
  "$gateway" run --config "$out/readonly-config.toml" >"$out/readonly.out" 2>"$out/readonly.err" & pid=$!
  if wait_for 60 has_stored "$state"; then echo "stored $EPOCHREALTIME" >>"$times"; fi
  step "read-only: an ext4 error under the running agent"
  echo "error $EPOCHREALTIME" >>"$times"
  echo "beacon-gateway rig test" >"/sys/fs/ext4/${dev##*/}/trigger_fs_error"
  grep " $state " /proc/mounts >"$out/readonly-mounts.txt"
  if wait_for 40 grep -q "events cannot be stored" "$out/readonly.err"; then echo "trouble $EPOCHREALTIME" >>"$times"; fi
  mount -o remount,rw "$state" >"$out/readonly-remount.txt" 2>&1
  echo "remount-rw exit $?" >>"$out/readonly-remount.txt"
  grep " $state " /proc/mounts >>"$out/readonly-mounts.txt"
  # The door decides on while the disk refuses: one walker cycle (it comes and goes every
  # 20 s; a held decision is logged only once stored, and counted at the stop).
  sleep 25
  echo "stopping $EPOCHREALTIME" >>"$times"
  kill -TERM "$pid"; wait "$pid"; echo $? >"$out/readonly.rc"
  stop_sampler readonly.samples "$sampler"
  step "read-only: agent stopped (exit $(cat "$out/readonly.rc")); unmount, e2fsck, mount"
  umount "$state"; echo $? >"$out/readonly-umount.rc"
  e2fsck -fy "$dev" >"$out/readonly-fsck.txt" 2>&1; echo $? >"$out/readonly-fsck.rc"
  mount -t ext4 -o errors=remount-ro "$dev" "$state"; echo $? >"$out/readonly-mount.rc"
  record readonly-outbox "$gateway" outbox list --state-dir "$state" --state all --json
  umount "$state"; losetup -d "$dev"
  step "read-only run over"
}
with_run_and_leds readonly readonly_run

kill "$attach_pid" 2>/dev/null; wait "$attach_pid" 2>/dev/null
dmesg >"$out/dmesg.txt"
step "done"
exit 0
