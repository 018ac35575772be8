"""The Pi-ready release: the static binary in an otherwise empty chroot, and the .deb.

Slow (a static release build costs minutes), so these run only when a release binary
exists (out/beacon-gateway-<version>-<arch>, from scripts/build-release; or
BEACON_GATEWAY_RELEASE_BIN) or when BEACON_GATEWAY_RELEASE_TESTS=1, which also builds it.
The chroot and the package installation need root (mount namespaces, /proc, overlayfs):
without it those tests skip and say why; the package's contents are checked regardless.

BEACON_GATEWAY_RELEASE_ARCH=aarch64 checks the Pi build made on this machine instead
(scripts/test-arm64): what applies to a binary of another architecture (static, stripped,
size, W^X, the .deb's contents); the tests that run it natively skip and say so.
"""

from __future__ import annotations

import os
import pathlib
import platform
import re
import shutil
import subprocess
import tempfile

import pytest

from bgworld.scenarios import DEMO_UUID
from conftest import REPO_ROOT, wait_until
from gateway import GatewayRun, final_lines, ibeacon_of


def _version() -> str:
    source = (REPO_ROOT / "Sources/BeaconGatewayCLI/BeaconGateway.swift").read_text()
    match = re.search(r'static let version = "([^"]+)"', source)
    assert match, "no version in BeaconGateway.swift"
    return match.group(1)


VERSION = _version()
RELEASE_ARCH = os.environ.get("BEACON_GATEWAY_RELEASE_ARCH") or platform.machine()
FOREIGN = RELEASE_ARCH != platform.machine()
DEB_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}[RELEASE_ARCH]
FILE_ARCH = {"x86_64": "x86-64", "aarch64": "ARM aarch64"}[RELEASE_ARCH]
RELEASE_BIN = pathlib.Path(
    os.environ.get("BEACON_GATEWAY_RELEASE_BIN") or REPO_ROOT / "out" / f"beacon-gateway-{VERSION}-{RELEASE_ARCH}"
)
REQUESTED = os.environ.get("BEACON_GATEWAY_RELEASE_TESTS") == "1"
SIZE_BUDGET = 25 * 1024 * 1024
IDENTITY_1M = f"{DEMO_UUID}:100:1"
CA_BUNDLE = pathlib.Path("/etc/ssl/certs/ca-certificates.crt")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (REQUESTED or RELEASE_BIN.is_file()),
        reason=f"no release binary at {RELEASE_BIN} (run scripts/build-release, or set BEACON_GATEWAY_RELEASE_TESTS=1)",
    ),
]

# A configuration the chroot can satisfy: no secret files, state under /var/lib, and one
# person whose tag is the world's 1 m tag.
CHROOT_CONFIG = f"""\
[gateway]
id = "door-release-test"
site = "S_TEST"
door = "chroot"
state_dir = "/var/lib/beacon-gateway"

[bluetooth]
transport = "hci0"
scan = "passive"
tag_interval_ms = 100

[[person]]
id = "u_release"
name = "Release"
  [[person.tag]]
  id = "tag-release"
  ibeacon = "{IDENTITY_1M}"
"""


@pytest.fixture(scope="module")
def release_bin() -> pathlib.Path:
    if not RELEASE_BIN.is_file():
        # Only reachable with BEACON_GATEWAY_RELEASE_TESTS=1: build it (minutes).
        result = subprocess.run([str(REPO_ROOT / "scripts/build-release"), "--arch", RELEASE_ARCH], cwd=REPO_ROOT,
                                capture_output=True, text=True, timeout=3600)
        assert result.returncode == 0, f"scripts/build-release failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert RELEASE_BIN.is_file()
    return RELEASE_BIN


_MOUNT_PROBE = r"""
set -e
dir=$1
mount -t tmpfs tmpfs "$dir"
mkdir "$dir/upper" "$dir/work" "$dir/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$dir/root"
mount -t proc proc "$dir/root/proc"
"""
_mount_verdict: list[str | None] = []


def _require_root_mounts() -> None:
    """Skip (with the reason) unless this process may mount tmpfs, overlayfs and /proc in
    a private mount namespace: the empty chroot and the scratch system need all three.
    Both run the binary (the package's postinst runs check-config), so natively only."""
    if FOREIGN:
        pytest.skip(f"runs the {RELEASE_ARCH} binary natively; scripts/test-arm64 runs it under qemu-user")
    if os.geteuid() != 0:
        pytest.skip("needs root: mounting /proc (and overlayfs) inside a private mount namespace")
    if not _mount_verdict:
        with tempfile.TemporaryDirectory() as probe_dir:
            probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", _MOUNT_PROBE,
                                    "sh", probe_dir], capture_output=True, text=True, timeout=60)
        _mount_verdict.append(None if probe.returncode == 0 else (probe.stderr.strip() or f"exit {probe.returncode}"))
    if _mount_verdict[0] is not None:
        pytest.skip(f"private mounts (tmpfs, overlayfs, proc) are not permitted here: {_mount_verdict[0]}")


# --- the binary itself ----------------------------------------------------------------


def test_release_binary_is_static_stripped_and_within_budget(release_bin):
    ldd = subprocess.run(["ldd", str(release_bin)], capture_output=True, text=True)
    assert "not a dynamic executable" in (ldd.stdout + ldd.stderr), ldd.stdout + ldd.stderr
    described = subprocess.run(["file", "-b", str(release_bin)], capture_output=True, text=True, check=True).stdout
    assert FILE_ARCH in described, described
    assert "statically linked" in described and "stripped" in described and "not stripped" not in described, described
    size = release_bin.stat().st_size
    assert size <= SIZE_BUDGET, (
        f"{size} bytes ({size / 1048576:.1f} MB) > 25 MB: scripts/build-release names the code that pulls in "
        "Foundation/ICU (any Foundation API outside FoundationEssentials)"
    )


def test_release_binary_has_no_writable_and_executable_segment(release_bin):
    result = subprocess.run([str(REPO_ROOT / "scripts/check-wx"), str(release_bin)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("W^X ok:") and "LOAD[" in result.stdout, result.stdout


def test_the_wx_check_refuses_a_writable_and_executable_segment(tmp_path):
    # The guard itself: a program with a section flagged writable AND executable gets an
    # RWE LOAD segment from GNU ld (which only warns), and check-wx must fail on it.
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    source = tmp_path / "wx.c"
    source.write_text('int main(void) { return 0; }\n'
                      '__asm__(".section .wx,\\"awx\\",@progbits\\n.byte 0\\n.previous");\n')
    subprocess.run(["gcc", "-o", str(tmp_path / "wx"), str(source)], check=True, capture_output=True)
    result = subprocess.run([str(REPO_ROOT / "scripts/check-wx"), str(tmp_path / "wx")], capture_output=True, text=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "RWE" in result.stdout, result.stdout


# --- the empty chroot -----------------------------------------------------------------


@pytest.fixture
def empty_root(release_bin, tmp_path) -> pathlib.Path:
    """Only the binary, its config, a CA bundle, an empty state directory and a mount
    point for /proc."""
    _require_root_mounts()
    root = tmp_path / "root"
    (root / "proc").mkdir(parents=True)
    shutil.copy2(release_bin, root / "beacon-gateway")
    config_dir = root / "etc/beacon-gateway"
    config_dir.mkdir(parents=True)
    (config_dir / "gateway.toml").write_text(CHROOT_CONFIG)
    (root / "var/lib/beacon-gateway").mkdir(parents=True)
    if CA_BUNDLE.is_file():
        (root / "etc/ssl/certs").mkdir(parents=True)
        shutil.copy2(CA_BUNDLE, root / "etc/ssl/certs/ca-certificates.crt")
    # The root holds nothing else: no libraries, no loader, no shell.
    assert not (root / "lib").exists() and not (root / "usr").exists() and not (root / "bin").exists()
    return root


def _in_chroot(root: pathlib.Path, *args: str) -> list[str]:
    """argv that mounts /proc in a private mount namespace and execs the binary in the
    chroot; unshare, sh and chroot all exec, so the child's pid is the binary's, and the
    mount vanishes with it."""
    script = 'root=$1; shift; mount -t proc proc "$root/proc" && exec chroot "$root" /beacon-gateway "$@"'
    return ["--mount", "--propagation", "private", "sh", "-c", script, "sh", str(root), *args]


def _run_in_chroot(root: pathlib.Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", *_in_chroot(root, *args)], capture_output=True, text=True, timeout=timeout)


def test_check_config_in_an_empty_chroot(empty_root):
    result = _run_in_chroot(empty_root, "check-config", "--config", "/etc/beacon-gateway/gateway.toml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "door-release-test" in result.stdout


def test_scan_live_then_replayed_from_its_capture_in_an_empty_chroot(empty_root, three_tags):
    # Live against the virtual world over loopback (the chroot shares the network), with a
    # capture written inside the chroot ...
    live = GatewayRun("unshare", _in_chroot(empty_root, "scan", "--config", "/etc/beacon-gateway/gateway.toml",
                                            "--transport", three_tags.transport, "--seconds", "3", "--json",
                                            "--capture", "/scan.btsnoop"))
    try:
        assert live.wait_exit(60) == 0, live.diagnostics()
    finally:
        live.kill()
    live_finals = {ibeacon_of(line): line for line in final_lines(live.lines)}
    assert IDENTITY_1M in live_finals, live.diagnostics()
    capture = empty_root / "scan.btsnoop"
    assert capture.stat().st_size > 16

    # ... then the capture replayed: the same advertisers, and the configured person matched
    # (the installed configuration is scan's default, as run's).
    replay = GatewayRun("unshare", _in_chroot(empty_root, "scan", "--transport", "btsnoop:/scan.btsnoop", "--json"))
    try:
        assert replay.wait_exit(60) == 0, replay.diagnostics()
    finally:
        replay.kill()
    assert not replay.bad_lines, replay.bad_lines[:3]
    finals = {ibeacon_of(line): line for line in final_lines(replay.lines)}
    assert IDENTITY_1M in finals, replay.diagnostics()
    assert finals[IDENTITY_1M]["person"] == "u_release"
    assert finals[IDENTITY_1M]["tag"] == "tag-release"
    assert set(filter(None, finals)) == set(filter(None, live_finals))

    # --no-config: the same advertisers, nobody's.
    bare = GatewayRun("unshare", _in_chroot(empty_root, "scan", "--no-config", "--transport", "btsnoop:/scan.btsnoop",
                                            "--json"))
    try:
        assert bare.wait_exit(60) == 0, bare.diagnostics()
    finally:
        bare.kill()
    bare_finals = {ibeacon_of(line): line for line in final_lines(bare.lines)}
    assert bare_finals[IDENTITY_1M]["person"] is None
    assert set(filter(None, bare_finals)) == set(filter(None, finals))


def _has_subcommand(binary: pathlib.Path, name: str) -> bool:
    result = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=30)
    return re.search(rf"^\s+{re.escape(name)}\s", result.stdout, re.MULTILINE) is not None


def test_run_in_an_empty_chroot_scans_and_stops_cleanly(empty_root, release_bin, three_tags):
    if not _has_subcommand(release_bin, "run"):
        pytest.skip("this build has no `run` subcommand yet")
    config = empty_root / "etc/beacon-gateway/gateway.toml"
    config.write_text(CHROOT_CONFIG.replace('transport = "hci0"', f'transport = "{three_tags.transport}"'))
    run = GatewayRun("unshare", _in_chroot(empty_root, "run", "--config", "/etc/beacon-gateway/gateway.toml"))
    try:
        wait_until(lambda: any(s["open"] and s["scanning"] for s in three_tags.status()["sessions"]),
                   timeout=30, what="the agent in the chroot to start scanning the virtual controller")
        assert run.process.poll() is None, run.diagnostics()
        run.process.terminate()
        assert run.wait_exit(10) == 0, run.diagnostics()
    finally:
        run.kill()


# --- the Debian package -----------------------------------------------------------------


@pytest.fixture(scope="module")
def deb(release_bin) -> pathlib.Path:
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    result = subprocess.run([str(REPO_ROOT / "scripts/package-deb"), "--binary", str(release_bin), "--arch", DEB_ARCH],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    match = re.search(r"^package: (\S+\.deb)", result.stdout, re.MULTILINE)
    assert match, result.stdout
    return REPO_ROOT / match.group(1)


def test_deb_lists_the_binary_unit_conffile_and_docs(deb, release_bin):
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    entries = {}
    for line in listing.splitlines():
        fields = line.split()
        entries[fields[-1].removeprefix(".")] = (fields[0], fields[1], int(fields[2]))
    assert entries["/usr/bin/beacon-gateway"][0] == "-rwxr-xr-x"
    assert entries["/usr/bin/beacon-gateway"][2] == release_bin.stat().st_size
    for path in ("/lib/systemd/system/beacon-gateway.service", "/etc/beacon-gateway/gateway.toml",
                 "/lib/udev/rules.d/60-beacon-gateway-gpio.rules", "/usr/share/doc/beacon-gateway/copyright",
                 "/usr/share/doc/beacon-gateway/README.md", "/usr/share/doc/beacon-gateway/gateway.example.toml",
                 "/usr/share/doc/beacon-gateway/LICENSE", "/usr/share/doc/beacon-gateway/BUILD-INFO",
                 "/usr/share/doc/beacon-gateway/relink-kit.tar.xz"):
        assert path in entries, f"{path} missing from the package:\n{listing}"
    # Every guide README links to, where its links (docs/…) find it; the unit points there.
    for guide in sorted(path for path in (REPO_ROOT / "docs").rglob("*") if path.is_file()):
        packaged = "/usr/share/doc/beacon-gateway/docs/" + guide.relative_to(REPO_ROOT / "docs").as_posix()
        assert packaged in entries, f"{packaged} missing from the package"
        assert entries[packaged][0] == "-rw-r--r--", (packaged, entries[packaged])
    unit = (REPO_ROOT / "systemd" / "beacon-gateway.service").read_text()
    documentation = next(line for line in unit.splitlines() if line.startswith("Documentation="))
    for uri in documentation.removeprefix("Documentation=").split():
        assert uri.removeprefix("file:") in entries, f"the unit's {uri} is not in the package"
    assert all(owner == "root/root" for _, owner, _ in entries.values())
    # No secrets ship: the token and keys are the installer's.
    assert not any(name.endswith(("token", ".key")) for name in entries)

    def field(name: str) -> str:
        return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True, check=True).stdout.strip()

    assert field("Package") == "beacon-gateway"
    assert field("Version") == VERSION
    assert field("Architecture") == DEB_ARCH
    # A static binary needs no shared libraries; postinst needs adduser.
    assert field("Depends") == "adduser"

    with tempfile.TemporaryDirectory() as control:
        subprocess.run(["dpkg-deb", "-e", str(deb), control], check=True)
        assert pathlib.Path(control, "conffiles").read_text().split() == ["/etc/beacon-gateway/gateway.toml"]
        for script in ("postinst", "prerm", "postrm"):
            path = pathlib.Path(control, script)
            assert os.access(path, os.X_OK), f"{script} is not executable"
            subprocess.run(["sh", "-n", str(path)], check=True)
    with tempfile.TemporaryDirectory() as data:
        subprocess.run(["dpkg-deb", "-x", str(deb), data], check=True)
        copyright_text = pathlib.Path(data, "usr/share/doc/beacon-gateway/copyright").read_text()
        for licence in ("LGPL-2.1", "Apache-2.0", "Runtime Library Exception", "curl", "Zlib", "public domain",
                        "EPL-2.0"):
            assert licence in copyright_text, f"copyright lacks {licence}"
        assert "relink-kit.tar.xz" in copyright_text
        project_licence = pathlib.Path(data, "usr/share/doc/beacon-gateway/LICENSE").read_text()
        assert "Apache License" in project_licence and "Version 2.0" in project_licence
        build_info = pathlib.Path(data, "usr/share/doc/beacon-gateway/BUILD-INFO").read_text()
        assert FILE_ARCH in build_info and "toolchain:" in build_info and "libgpiod" in build_info, build_info
        assert re.search(r"^w\^x: +ok:", build_info, re.MULTILINE), build_info


def test_relink_kit_relinks_the_executable(release_bin, tmp_path):
    """What the LGPL asks of a static libgpiod: the kit's link.sh, with its own objects and
    lib/ directory, links a working executable again."""
    kit = pathlib.Path(f"{release_bin}.relink.tar.xz")
    assert kit.is_file(), f"no relink kit at {kit} (scripts/build-release makes it)"
    subprocess.run(["tar", "-xJf", str(kit), "-C", str(tmp_path)], check=True)
    (root,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    assert (root / "lib/libcurl.a").is_file() and any((root / "objects").rglob("*.o"))
    assert (root / "lib/libmosquitto.a").is_file(), "the kit lacks the libmosquitto.a built from source"
    assert "libgpiod" in (root / "README").read_text()
    if FOREIGN:
        pytest.skip("relinking needs the build's own toolchain: the aarch64 one lives in scripts/cross/aarch64-root")
    link = subprocess.run(["sh", str(root / "link.sh")], capture_output=True, text=True, timeout=600)
    assert link.returncode == 0, link.stdout[-2000:] + link.stderr[-2000:]
    relinked = root / "beacon-gateway"
    version = subprocess.run([str(relinked), "--version"], capture_output=True, text=True, timeout=30)
    original = subprocess.run([str(release_bin), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout == original.stdout, version.stdout + version.stderr
    assert "statically linked" in subprocess.run(["file", "-b", str(relinked)], capture_output=True, text=True).stdout


# Installing for real, without touching this machine: a private mount namespace with an
# overlay over / (writes go to a tmpfs), chrooted into, so dpkg, adduser and systemctl act
# on a throwaway copy of the system. The maintainer scripts run as they would on a Pi.
SCRATCH_SETUP = r"""
set -eu
work=$1; deb=$2
mount -t tmpfs tmpfs "$work"
mkdir -p "$work/upper" "$work/work" "$work/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/work" "$work/root"
M=$work/root
mount -t proc proc "$M/proc"
mkdir -p "$M/tmp/pkg"
cp "$deb" "$M/tmp/pkg/beacon-gateway.deb"
in_root() { chroot "$M" "$@"; }
"""


def _in_scratch_system(deb: pathlib.Path, tmp_path: pathlib.Path, script: str) -> subprocess.CompletedProcess:
    _require_root_mounts()
    work = tmp_path / "scratch"
    work.mkdir()
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", SCRATCH_SETUP + script,
                           "sh", str(work), str(deb)], capture_output=True, text=True, timeout=300)


def _facts(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if re.match(r"^[a-z_]+=", line))


def test_deb_installs_creates_the_user_and_enables_only_an_edited_config(deb, tmp_path):
    edited = CHROOT_CONFIG.replace("door-release-test", "door-installed")
    access = CHROOT_CONFIG + '\n[security]\nmaster_key_file = "/etc/beacon-gateway/root.key"\n'
    script = f"""
echo "== first install"
in_root dpkg -i /tmp/pkg/beacon-gateway.deb
echo "user=$(in_root getent passwd beacon-gateway | cut -d: -f1,6,7)"
echo "groups=$(in_root id -nG beacon-gateway)"
echo "config_dir=$(in_root stat -c '%a %U:%G' /etc/beacon-gateway)"
echo "config=$(in_root stat -c '%a %U:%G' /etc/beacon-gateway/gateway.toml)"
echo "state_dir=$(in_root stat -c '%a %U:%G' /var/lib/beacon-gateway)"
echo "binary=$(in_root stat -c '%a %U:%G' /usr/bin/beacon-gateway)"
echo "enabled_first=$(in_root test -e /etc/systemd/system/multi-user.target.wants/beacon-gateway.service && echo yes || echo no)"
echo "== a new site master key, made by root as the guide says"
in_root beacon-gateway keygen --new-master /etc/beacon-gateway/master.key
echo "master_key=$(in_root stat -c '%a %U:%G' /etc/beacon-gateway/master.key)"
echo "master_key_service=$(in_root runuser -u beacon-gateway -- cat /etc/beacon-gateway/master.key >/dev/null && echo reads || echo refused)"
echo "== check-config run by root answers for the service's user"
cat >"$M/etc/beacon-gateway/access.toml" <<'TOML'
{access}TOML
in_root cp /etc/beacon-gateway/master.key /etc/beacon-gateway/root.key
in_root chown root:root /etc/beacon-gateway/root.key
status=0; in_root beacon-gateway check-config --config /etc/beacon-gateway/access.toml >/dev/null 2>"$M/tmp/pkg/access.err" || status=$?
echo "access_root_owned=$status"
sed 's/^/access: /' "$M/tmp/pkg/access.err"
in_root chown beacon-gateway: /etc/beacon-gateway/root.key
status=0; in_root beacon-gateway check-config --config /etc/beacon-gateway/access.toml >/dev/null 2>&1 || status=$?
echo "access_service_owned=$status"
echo "== edit the configuration and reinstall (the upgrade path)"
cat >"$M/etc/beacon-gateway/gateway.toml" <<'TOML'
{edited}TOML
# Closed to the service alone, as a file with a key or an IRK inline must be: kept so.
in_root chown beacon-gateway:beacon-gateway /etc/beacon-gateway/gateway.toml
in_root chmod 600 /etc/beacon-gateway/gateway.toml
in_root dpkg -i /tmp/pkg/beacon-gateway.deb
echo "config_edited=$(in_root stat -c '%a %U:%G' /etc/beacon-gateway/gateway.toml)"
echo "enabled_edited=$(in_root test -e /etc/systemd/system/multi-user.target.wants/beacon-gateway.service && echo yes || echo no)"
echo "config_kept=$(grep -c door-installed "$M/etc/beacon-gateway/gateway.toml")"
echo "== purge"
in_root rm /etc/beacon-gateway/access.toml /etc/beacon-gateway/root.key
in_root install -m 600 -o beacon-gateway -g beacon-gateway /dev/null /etc/beacon-gateway/token
in_root dpkg --purge beacon-gateway
echo "binary_after_purge=$(in_root test -e /usr/bin/beacon-gateway && echo present || echo gone)"
echo "secrets_after_purge=$(in_root sh -c 'ls /etc/beacon-gateway/token /etc/beacon-gateway/master.key 2>/dev/null | wc -l')"
echo "config_dir_after_purge=$(in_root test -d /etc/beacon-gateway && echo present || echo gone)"
echo "enabled_after_purge=$(in_root test -e /etc/systemd/system/multi-user.target.wants/beacon-gateway.service && echo yes || echo no)"
"""
    result = _in_scratch_system(deb, tmp_path, script)
    assert result.returncode == 0, result.stdout + result.stderr
    facts = _facts(result.stdout)
    assert facts["user"] == "beacon-gateway:/var/lib/beacon-gateway:/usr/sbin/nologin", result.stdout
    assert "gpio" in facts["groups"].split(), facts
    assert facts["config_dir"] == "750 root:beacon-gateway"
    assert facts["config"] == "640 root:beacon-gateway"
    assert facts["state_dir"] == "750 beacon-gateway:beacon-gateway"
    assert facts["binary"] == "755 root:root"
    # keygen run by root gives the key to the service, which reads it (a root-owned 0600 key
    # would stop the service at its start).
    assert facts["master_key"] == "600 beacon-gateway:beacon-gateway", result.stdout + result.stderr
    assert facts["master_key_service"] == "reads"
    assert "owner beacon-gateway: the service reads it" in result.stdout + result.stderr
    # Root could read the root-owned key; the service could not: check-config says so, with
    # the fix, and fails as the start would.
    assert facts["access_root_owned"] == "2", result.stdout
    assert ("access: /etc/beacon-gateway/access.toml: the service (user beacon-gateway) cannot read "
            "/etc/beacon-gateway/root.key (owner root:root, mode 0600); run `chown beacon-gateway: "
            "/etc/beacon-gateway/root.key && chmod 600 /etc/beacon-gateway/root.key`") in result.stdout, result.stdout
    assert facts["access_service_owned"] == "0", result.stdout
    # The example configuration: installed, not enabled, and the installer is told what next.
    assert facts["enabled_first"] == "no"
    assert "NOT enabled" in result.stdout and "check-config" in result.stdout
    # An edited configuration that passes check-config: enabled (never started in a chroot).
    assert facts["enabled_edited"] == "yes", result.stdout + result.stderr
    assert facts["config_kept"] == "1", "the edited conffile must survive the reinstall"
    assert facts["config_edited"] == "600 beacon-gateway:beacon-gateway", "an edited file keeps its owner and mode"
    assert facts["binary_after_purge"] == "gone"
    # A retired door keeps neither the token nor the site master key.
    assert facts["secrets_after_purge"] == "0", result.stdout
    assert facts["config_dir_after_purge"] == "gone", result.stdout
    assert facts["enabled_after_purge"] == "no"


def _next_version_of(deb: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    """The same package as version N+1: what an upgrade exercises is the maintainer
    scripts and dpkg's handling of the files, which are the same."""
    tree = tmp_path / "next"
    subprocess.run(["dpkg-deb", "-R", str(deb), str(tree)], check=True)
    control = tree / "DEBIAN/control"
    control.write_text(re.sub(r"^Version: .*$", f"Version: {VERSION}+next1", control.read_text(), flags=re.MULTILINE))
    next_deb = tmp_path / "beacon-gateway-next.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", str(tree), str(next_deb)],
                   check=True, capture_output=True)
    return next_deb


def test_upgrade_keeps_the_outbox_and_its_owner(deb, tmp_path):
    _require_root_mounts()  # before repacking: that alone takes a while
    next_deb = _next_version_of(deb, tmp_path)
    script = f"""
cp "{next_deb}" "$M/tmp/pkg/next.deb"
as_service() {{ in_root runuser -u beacon-gateway -- /usr/bin/beacon-gateway "$@"; }}
echo "== version N"
in_root dpkg -i /tmp/pkg/beacon-gateway.deb >/dev/null
as_service outbox enqueue --state-dir /var/lib/beacon-gateway --count 7 --persons 3 >"$M/tmp/pkg/acks"
echo "committed=$(grep -c . "$M/tmp/pkg/acks")"
echo "keys_before=$(as_service outbox export --state-dir /var/lib/beacon-gateway | sha256sum | cut -c1-16)"
echo "== upgrade to N+1"
in_root dpkg -i /tmp/pkg/next.deb
echo "version=$(in_root dpkg-query -W -f='${{Version}}' beacon-gateway)"
echo "state_dir=$(in_root stat -c '%a %U:%G' /var/lib/beacon-gateway)"
echo "database=$(in_root stat -c '%U:%G' /var/lib/beacon-gateway/gateway.sqlite)"
echo "pending=$(as_service outbox status --state-dir /var/lib/beacon-gateway --json | tr -d ' ' | grep -o '"pending":[0-9]*' | cut -d: -f2)"
echo "keys_after=$(as_service outbox export --state-dir /var/lib/beacon-gateway | sha256sum | cut -c1-16)"
echo "== remove (not purge) keeps it too"
in_root dpkg -r beacon-gateway >/dev/null
echo "after_remove=$(in_root test -f /var/lib/beacon-gateway/gateway.sqlite && echo kept || echo gone)"
"""
    result = _in_scratch_system(deb, tmp_path, script)
    assert result.returncode == 0, result.stdout + result.stderr
    facts = _facts(result.stdout)
    assert facts["committed"] == "7", result.stdout + result.stderr
    assert facts["version"] == f"{VERSION}+next1"
    assert facts["state_dir"] == "750 beacon-gateway:beacon-gateway"
    assert facts["database"] == "beacon-gateway:beacon-gateway"
    assert facts["pending"] == "7", result.stdout
    assert facts["keys_after"] == facts["keys_before"], "the outbox's events changed across the upgrade"
    assert facts["after_remove"] == "kept"


def test_deb_does_not_enable_an_edited_but_invalid_config(deb, tmp_path):
    script = """
in_root dpkg -i /tmp/pkg/beacon-gateway.deb >/dev/null
printf '[gateway]\nid = "door-x"\nnot_a_key = 1\n' >"$M/etc/beacon-gateway/gateway.toml"
in_root dpkg -i /tmp/pkg/beacon-gateway.deb
echo "enabled=$(in_root test -e /etc/systemd/system/multi-user.target.wants/beacon-gateway.service && echo yes || echo no)"
"""
    result = _in_scratch_system(deb, tmp_path, script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _facts(result.stdout)["enabled"] == "no"
    assert "does not pass check-config" in result.stdout


def _unit_source() -> pathlib.Path:
    return REPO_ROOT / "systemd" / "beacon-gateway.service"


def test_packaged_unit_verifies_on_the_installed_system(deb, tmp_path):
    if not _unit_source().is_file():
        pytest.skip("systemd/beacon-gateway.service does not exist yet: the package carries a placeholder unit")
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    with tempfile.TemporaryDirectory() as data:
        subprocess.run(["dpkg-deb", "-x", str(deb), data], check=True)
        packaged = pathlib.Path(data, "lib/systemd/system/beacon-gateway.service").read_bytes()
        assert packaged == _unit_source().read_bytes()
    # Verified where it is installed: ExecStart=, User= and the targets all resolve there.
    script = """
in_root dpkg -i /tmp/pkg/beacon-gateway.deb >/dev/null
systemd-analyze verify --root="$M" /lib/systemd/system/beacon-gateway.service
echo "verify=$?"
"""
    result = _in_scratch_system(deb, tmp_path, script)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _facts(result.stdout)["verify"] == "0"
    assert "beacon-gateway.service" not in result.stderr, result.stderr


def test_install_sh_installs_the_deb_leaves_bluetoothd_and_prints_next_steps(deb, tmp_path):
    # Recommends off inside the scratch system: everything the package needs is already
    # there, so apt resolves it without any download.
    script = f"""
mkdir -p "$M/tmp/pkg/scripts"
cp "{REPO_ROOT / 'scripts/install.sh'}" "$M/tmp/pkg/scripts/install.sh"
printf 'APT::Install-Recommends "false";\\n' >"$M/tmp/pkg/apt.conf"
APT_CONFIG=/tmp/pkg/apt.conf in_root sh /tmp/pkg/scripts/install.sh --keep-bluetoothd /tmp/pkg/beacon-gateway.deb </dev/null
echo "installed=$(in_root dpkg-query -W -f='${{Status}}' beacon-gateway)"
echo "enabled=$(in_root test -e /etc/systemd/system/multi-user.target.wants/beacon-gateway.service && echo yes || echo no)"
"""
    result = _in_scratch_system(deb, tmp_path, script)
    assert result.returncode == 0, result.stdout + result.stderr
    facts = _facts(result.stdout)
    assert facts["installed"] == "install ok installed", result.stdout + result.stderr
    assert facts["enabled"] == "no"
    for step in ("/etc/beacon-gateway/gateway.toml", "beacon-gateway check-config",
                 "systemctl enable --now beacon-gateway", "journalctl -u beacon-gateway -f", "LEDs"):
        assert step in result.stdout, f"install.sh does not tell the installer: {step}"


def test_install_sh_refuses_a_package_of_another_architecture(tmp_path):
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed")
    machine = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    other = "arm64" if machine != "arm64" else "amd64"
    tree = tmp_path / "tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN/control").write_text(
        f"Package: beacon-gateway\nVersion: 0.0.1\nArchitecture: {other}\nMaintainer: test <t@localhost>\nDescription: test\n")
    package = tmp_path / f"beacon-gateway_0.0.1_{other}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(package)], check=True, capture_output=True)
    if os.geteuid() != 0:
        pytest.skip("install.sh checks for root before the architecture")
    # Refused before anything is installed, so running it on this machine is safe.
    result = subprocess.run(["sh", str(REPO_ROOT / "scripts/install.sh"), str(package)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"is for {other}" in result.stderr


def test_help_names_where_the_package_puts_the_documentation(gateway_bin):
    result = subprocess.run([str(gateway_bin), "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "/usr/share/doc/beacon-gateway/" in result.stdout and "docs/raspberry-pi.md" in result.stdout, result.stdout
