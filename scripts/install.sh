#!/bin/sh
# Installs beacon-gateway on the Pi at a door (Raspberry Pi OS or Debian 12, as root):
#
#   sudo sh install.sh [--yes | --keep-bluetoothd] beacon-gateway_<version>_arm64.deb
#
# - installs the .deb with apt, which brings the few runtime packages it wants (adduser;
#   ca-certificates and rfkill as recommends): the binary itself is static and needs no
#   shared libraries;
# - unblocks Bluetooth in rfkill;
# - offers to stop bluetoothd (bluetooth.service): the gateway takes the controller over
#   an exclusive HCI user channel, which fails with "busy" while bluetoothd manages it.
#   --yes disables it without asking; --keep-bluetoothd leaves it running (bluetoothd
#   cannot be told to leave one adapter alone, so a gateway beside a running bluetoothd
#   is not supported: docs/raspberry-pi.md, section 4);
# - never starts the service: it prints what to edit and how to start it.
set -eu

assume_yes=no
keep_bluetoothd=no
deb=""
for arg in "$@"; do
    case "$arg" in
        --yes|-y) assume_yes=yes ;;
        --keep-bluetoothd) keep_bluetoothd=yes ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
        *) deb=$arg ;;
    esac
done

if [ "$(id -u)" -ne 0 ]; then
    echo "install.sh: run as root (sudo sh $0 …)" >&2
    exit 1
fi
if [ -z "$deb" ]; then
    # Default: the package for this machine next to this script or in out/.
    arch=$(dpkg --print-architecture)
    for candidate in "$(dirname "$0")"/beacon-gateway_*_"$arch".deb "$(dirname "$0")"/../out/beacon-gateway_*_"$arch".deb; do
        [ -f "$candidate" ] && deb=$candidate
    done
    [ -n "$deb" ] || { echo "install.sh: give the path of beacon-gateway_<version>_$arch.deb" >&2; exit 2; }
fi
[ -f "$deb" ] || { echo "install.sh: no such file: $deb" >&2; exit 2; }

machine_arch=$(dpkg --print-architecture)
package_arch=$(dpkg-deb -f "$deb" Architecture)
if [ "$package_arch" != "$machine_arch" ]; then
    echo "install.sh: $deb is for $package_arch, this machine is $machine_arch." >&2
    echo "  Build the package on an $machine_arch machine (scripts/build-release && scripts/package-deb)." >&2
    exit 1
fi

echo "== installing $(basename "$deb")"
# apt (not dpkg -i) so that Depends/Recommends come along; the path must look like a path.
case "$deb" in /*|./*|../*) ;; *) deb=./$deb ;; esac
DEBIAN_FRONTEND=noninteractive apt-get install -y "$deb"

echo "== Bluetooth"
if command -v rfkill >/dev/null 2>&1; then
    rfkill unblock bluetooth || true
fi
adapters=$(ls /sys/class/bluetooth 2>/dev/null | grep -E '^hci[0-9]+$' || true)
if [ -n "$adapters" ]; then
    echo "adapters: $(echo "$adapters" | tr '\n' ' ')"
else
    echo "no Bluetooth adapter found yet (on a Pi, hciuart.service attaches the built-in one; a USB dongle appears when plugged in)"
fi

bluetoothd_active=no
if systemctl is-active --quiet bluetooth.service 2>/dev/null || systemctl is-enabled --quiet bluetooth.service 2>/dev/null; then
    bluetoothd_active=yes
fi
if [ "$bluetoothd_active" = yes ] && [ "$keep_bluetoothd" = no ]; then
    answer=n
    if [ "$assume_yes" = yes ]; then
        answer=y
    elif [ -t 0 ]; then
        printf "bluetoothd (bluetooth.service) holds the adapter. Disable and stop it now? [y/N] "
        read -r answer || answer=n
    fi
    case "$answer" in
        y|Y|yes)
            # Only bluetoothd: on a Pi, hciuart.service (which creates hci0 for the
            # built-in controller) must keep running.
            systemctl disable --now bluetooth.service
            echo "bluetooth.service disabled and stopped"
            ;;
        *)
            echo "bluetooth.service left running: the gateway's hci transport will fail with"
            echo "  'busy' on an adapter bluetoothd manages. Later: sudo systemctl disable --now bluetooth"
            ;;
    esac
elif [ "$bluetoothd_active" = yes ]; then
    echo "bluetooth.service left running (--keep-bluetoothd): give the gateway an adapter bluetoothd does not manage"
else
    echo "bluetoothd is not running: good"
fi

gpio_group=$(stat -c %G /dev/gpiochip0 2>/dev/null || echo "")
case "$gpio_group" in
    gpio) echo "GPIO: /dev/gpiochip0 belongs to group gpio" ;;
    "") echo "GPIO: no /dev/gpiochip0 (LEDs need [leds] and a gpiochip)" ;;
    *) echo "GPIO: /dev/gpiochip0 belongs to group $gpio_group; the package's udev rule gives it to gpio after: sudo udevadm trigger --subsystem-match=gpio" ;;
esac

cat <<'EOF'

== next steps (type the commands after each $)
 1. Edit /etc/beacon-gateway/gateway.toml (it is root:beacon-gateway 0640: sudoedit it):
      [gateway] id (unique per door, never changed later), site, door
      [bluetooth] transport = "hci0" (see: $ ls /sys/class/bluetooth)
      [[person]] / [[person.tag]] for each person and tag
      [server] url (and ca_file for a private CA); [leds] lines (BCM 17/27/22 by default)
 2. Put the secret files in place, readable by the service only (token: from the site's
    server; a site without a master key yet makes one first: $ beacon-gateway keygen --new-master master.key)
      $ sudo install -m 600 -o beacon-gateway -g beacon-gateway token /etc/beacon-gateway/token
      $ sudo install -m 600 -o beacon-gateway -g beacon-gateway master.key /etc/beacon-gateway/master.key
 3. Check:  $ sudo beacon-gateway check-config
    Try:    $ sudo beacon-gateway scan --seconds 10     (with bluetoothd stopped: the tags in range)
 4. Start:  $ sudo systemctl enable --now beacon-gateway
 5. Watch:  $ journalctl -u beacon-gateway -f
    LEDs:   all on 300 ms at start; green steady = scanning; green off = not scanning;
            green 1 Hz = check-ins paused by the server; green double blink = check-in/out;
            amber off = all delivered; amber 1 Hz = events waiting for the server; amber
            steady = server refuses us or dead letters; amber 4 Hz = events cannot be stored
            (disk); red 4 Hz = controller down/recovering; red three flashes = a proof
            failed; red steady = configuration error. The card: docs/leds.md.
    Full guide: /usr/share/doc/beacon-gateway/docs/raspberry-pi.md (all guides: docs/README.md there).
EOF
