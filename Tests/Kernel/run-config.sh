#!/usr/bin/env bash
# run-config.sh STATE_DIR [GPIOCHIP]: the gateway.toml the guest runs `beacon-gateway run`
# with: hci0, no server (events stay in the outbox), short presence timings so that the
# world's walker (tag-walk, see Tests/Kernel/rig_session.py) is checked in and out within
# the guest's 40 s run, and [leds] on the gpio-sim chip when one is given (lines 0, 1, 2
# = green, amber, red, as guest-tests.sh makes them). The host-side tests validate it
# with `beacon-gateway check-config` too.
set -euo pipefail
state_dir=$1 chip=${2:-}
cat <<TOML
[gateway]
id = "door-rig"
site = "S_RIG"
door = "rig"
state_dir = "$state_dir"

[bluetooth]
transport = "hci0"
tag_interval_ms = 100

[presence]
enter_rssi = -70
exit_rssi = -75
window_s = 2
min_samples = 2
lost_after_s = 3
leave_after_s = 5
away_after_s = 10
TOML
if [ -n "$chip" ]; then
  cat <<TOML

[leds]
chip = "$chip"
green = 0
amber = 1
red = 2
TOML
fi
cat <<TOML

[[person]]
id = "u_walk"
name = "Walker"
require_proof = false
  [[person.tag]]
  id = "tag-walk"
  ibeacon = "e2c56db5-dffb-48d2-b060-d0f5a71096e0:100:9"
TOML
