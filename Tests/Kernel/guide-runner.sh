#!/bin/bash
# Runs INSIDE the rig's aarch64 guest booted from scripts/qemu/pi-image's system (a
# Raspberry Pi OS Lite-like Debian with systemd, bluetoothd and the user pi), as root, with
# /dev/hvc0 piped to the virtual world. Tests/Kernel/test_guide.py put in the share
# (/run/rig): guide-plan.tsv (docs/raspberry-pi.md's steps, Tests/Kernel/guide_steps.py),
# the packages, install.sh, the token, the test's gateway.toml and hci-attach.
#
# First what the Pi's boot and the installer's own hands do (not from the guide): hci0 on
# the UART (here /dev/hvc0), the header's gpiochip0 (a gpio-sim chip of 54 lines labelled
# as the Pi 4's), the two files copied into pi's home. Then every step of the plan in
# order, each command run by pi exactly as the guide writes it; each step's output and
# exit status go to results/step-N.{out,err,rc}, and every command is printed. The LEDs'
# pads are sampled all along (results/pads.txt). Exit status non-zero only when the
# system itself could not be set up: the pytest module judges the steps.
set -uo pipefail
share=${RIG_SHARE:-/run/rig}
out=$share/results
rm -rf "$out"; mkdir -p "$out"
started=${EPOCHREALTIME/./}
say() { echo "== guide $(( (${EPOCHREALTIME/./} - started) / 1000 )) ms: $*"; }
wait_for() { # SECONDS COMMAND...: poll every 50 ms until COMMAND succeeds
  local deadline=$(( $(date +%s) + $1 )); shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.05
  done
}

say "setup (the Pi's boot, not the guide): hci0 on the UART"
modprobe hci_uart || { echo "modprobe hci_uart failed"; exit 1; }
"$share/hci-attach" /dev/hvc0 30 >"$out/attach.out" 2>"$out/attach.err" &
wait_for 60 grep -qE "^hci0 (up|not up)" "$out/attach.out" || { echo "hci-attach did not report"; cat "$out/attach.err"; exit 1; }
cat "$out/attach.out"

say "setup (the Pi's header, not the guide): gpiochip0 with 54 lines, labelled pinctrl-bcm2711"
modprobe gpio-sim || exit 1
sim=/sys/kernel/config/gpio-sim/header
mkdir "$sim" "$sim/bank0" && echo 54 >"$sim/bank0/num_lines" && echo pinctrl-bcm2711 >"$sim/bank0/label" \
  && echo 1 >"$sim/live" || { echo "cannot make the gpio-sim chip"; exit 1; }
chip=$(cat "$sim/bank0/chip_name")
[ "$chip" = gpiochip0 ] || { echo "the simulated header is $chip, not gpiochip0"; exit 1; }
pads=/sys/devices/platform/$(cat "$sim/dev_name")/$chip
# Every change of the three LEDs' pads (BCM 17 green, 27 amber, 22 red), with the time.
# The three pads are three reads: one that straddles a change of pattern mixes the old
# and the new (seen under TCG: green and amber of "all three" with red of "off"). A
# sample counts only when a second read of all three agrees with the first.
(
  last=""
  while :; do
    read -r g <"$pads/sim_gpio17/value"; read -r a <"$pads/sim_gpio27/value"; read -r r <"$pads/sim_gpio22/value"
    read -r g2 <"$pads/sim_gpio17/value"; read -r a2 <"$pads/sim_gpio27/value"; read -r r2 <"$pads/sim_gpio22/value"
    if [ "$g$a$r" = "$g2$a2$r2" ] && [ "$g$a$r" != "$last" ]; then echo "${EPOCHREALTIME} $g $a $r"; last=$g$a$r; fi
    sleep 0.02
  done
) >"$out/pads.txt" &
sampler=$!

say "setup (the installer's copy to the Pi, not the guide): the package and install.sh in pi's home"
home=$(getent passwd pi | cut -d: -f6)
install -o pi -g pi -m 644 "$share"/files/* "$home"/ || exit 1
ls -l "$home" >"$out/home.txt"

n=0
while IFS=$'\t' read -r kind line user expect stop command; do
  n=$((n + 1))
  printf '%s\t%s\t%s\t%s\t%s\n' "$n" "$line" "$user" "$expect" "$command" >>"$out/steps.tsv"
  echo "${EPOCHREALTIME}" >"$out/step-$n.start"
  if [ "$kind" = setup ]; then
    say "step $n (guide line $line): setup $command (the test, not a command of the guide)"
    case "$command" in
      edit-config*)
        # As sudoedit would: the file keeps its owner and mode.
        cat "$share/gateway.toml" >/etc/beacon-gateway/gateway.toml
        echo $? >"$out/step-$n.rc" ;;
      *) echo "unknown setup step: $command" >"$out/step-$n.err"; echo 125 >"$out/step-$n.rc" ;;
    esac
  else
    say "step $n (guide line $line) as $user: \$ $command"
    if [ "$stop" -gt 0 ]; then
      # Stopped as Ctrl-C would: $stop s after its first output (pi's login and the
      # command's start take seconds of their own under TCG; a fixed $stop s from the
      # start could stop it before it printed anything), or 60 s after the start without
      # any. timeout(1) makes the process group and passes the SIGINT on to all of it; a
      # command still running when stopped has timeout's status, as the guide's plan says.
      echo "   (runs until stopped: stopped $stop s after its first output)"
      timeout -s INT $((stop + 90)) runuser -l pi -c "$command" </dev/null >"$out/step-$n.out" 2>"$out/step-$n.err" &
      follower=$!
      wait_for 60 test -s "$out/step-$n.out" || true
      sleep "$stop"
      if kill -INT "$follower" 2>/dev/null; then
        wait "$follower"; rc=124
      else
        wait "$follower"; rc=$?
      fi
    else
      runuser -l pi -c "$command" </dev/null >"$out/step-$n.out" 2>"$out/step-$n.err"
      rc=$?
    fi
    echo $rc >"$out/step-$n.rc"
    echo "   exit $rc$([ "$rc" = "$expect" ] || echo "  (the guide says $expect)")"
  fi
  echo "${EPOCHREALTIME}" >"$out/step-$n.end"
done <"$share/guide-plan.tsv"

say "after the guide (the test's checks)"
systemctl is-active beacon-gateway >"$out/after-active.txt" 2>&1
systemctl show beacon-gateway -p NRestarts -p ActiveEnterTimestamp -p StatusText >"$out/after-show.txt" 2>&1
sudo -u beacon-gateway beacon-gateway outbox export >"$out/after-outbox.jsonl" 2>"$out/after-outbox.err"
journalctl -b --no-pager -o short-monotonic >"$out/journal.txt" 2>&1
cp "$home/door.btsnoop" "$out/door.btsnoop" 2>/dev/null
kill "$sampler" 2>/dev/null
say "done: $n steps"
exit 0
