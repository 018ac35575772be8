"""Who may do what on the status socket (docs/security.md, "The status socket"): the agent
reads each client's credentials (SO_PEERCRED) and gives `status` to its own user, root and
its group, and enrolment (so a phone's IRK) only to root, its own user and members of
`[security] enroll_group`.

As systemd runs it, the agent runs as a service user of its own: the test machine runs as
root, so the test makes throwaway users and groups (groupadd, useradd; removed after) and
runs the agent and the CLI as them through setpriv. Skipped, with the reason, when not
root or when those tools are missing.

Skipped (with the reason) when the binary is missing: set BEACON_GATEWAY_BIN or build
.build/debug/beacon-gateway."""

from __future__ import annotations

import grp
import json
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile

import pytest

from agentprocess import AgentProcess
from conftest import wait_until
from test_enroll import GATEWAY_ID, Enrolment, config_text, world  # noqa: F401 (world: the fixture)


def run_tool(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, text=True, timeout=30)


@pytest.fixture
def accounts():
    """A service user with its own group, a plain member of that group, an installer in
    that group and in an enrolment group, and an outsider in neither."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make throwaway users and groups (useradd) and run commands as them (setpriv)")
    for tool in ("useradd", "groupadd", "userdel", "groupdel", "setpriv"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: cannot make throwaway users or run commands as them")
    suffix = secrets.token_hex(3)
    names = {role: f"bg{role}{suffix}" for role in ("svc", "member", "installer", "outsider", "enrol")}
    made_users, made_groups = [], []
    try:
        run_tool("useradd", "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", names["svc"])
        made_users.append(names["svc"])
        made_groups.append(names["svc"])
        run_tool("groupadd", "--system", names["enrol"])
        made_groups.append(names["enrol"])
        for role, groups in (("member", [names["svc"]]), ("installer", [names["svc"], names["enrol"]]), ("outsider", [])):
            run_tool("useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin",
                     *(["--groups", ",".join(groups)] if groups else []), names[role])
            made_users.append(names[role])
            made_groups.append(names[role])
        yield names
    finally:
        for user in made_users:
            subprocess.run(["userdel", user], capture_output=True, timeout=30)
        for group in made_groups:
            subprocess.run(["groupdel", group], capture_output=True, timeout=30)


def as_user(name: str) -> tuple[str, ...]:
    account = pwd.getpwnam(name)
    return ("setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups", "--")


@pytest.fixture
def door(accounts, world):  # noqa: F811 (the fixture)
    """The service's directories outside pytest's own (which only root may enter): the
    configuration (the service user's, mode 600), the state directory and the runtime
    directory with the status socket (the service's group may enter)."""
    base = tempfile.mkdtemp(prefix="bg-access-")
    os.chmod(base, 0o755)
    service = pwd.getpwnam(accounts["svc"])
    runtime = os.path.join(base, "run")
    state = os.path.join(base, "state")
    for directory in (runtime, state):
        os.mkdir(directory, 0o750)
        os.chown(directory, service.pw_uid, service.pw_gid)
    config = os.path.join(base, "gateway.toml")
    with open(config, "w") as file:
        file.write(config_text(world.transport, state) + f'\n[security]\nenroll_group = "{accounts["enrol"]}"\n')
    os.chmod(config, 0o600)
    os.chown(config, service.pw_uid, service.pw_gid)
    yield config, runtime
    shutil.rmtree(base, ignore_errors=True)


def status_as(gateway_bin, runtime: str, prefix: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, str(gateway_bin), "status", "--json"], capture_output=True, text=True, timeout=15,
                          env=dict(os.environ, RUNTIME_DIRECTORY=runtime))


def test_status_for_the_group_enrolment_only_for_root_the_service_and_the_enroll_group(gateway_bin, world, accounts, door):  # noqa: F811
    config, runtime = door
    socket_path = os.path.join(runtime, "status.sock")
    agent = AgentProcess(gateway_bin, config, env={"RUNTIME_DIRECTORY": runtime}, prefix=as_user(accounts["svc"]))
    enrolments: list[Enrolment] = []
    try:
        agent.wait_log(r"status socket path=", "the status socket")
        agent.wait_log(r"controller up", "the agent's controller")
        info = os.stat(socket_path)
        assert (info.st_uid, info.st_gid) == (pwd.getpwnam(accounts["svc"]).pw_uid, grp.getgrnam(accounts["svc"]).gr_gid)

        # status: a plain member of the service's group and root read it; an outsider cannot.
        for prefix in (as_user(accounts["member"]), ()):
            result = status_as(gateway_bin, runtime, prefix)
            assert result.returncode == 0, result.stderr
            assert json.loads(result.stdout)["gatewayId"] == GATEWAY_ID
        outsider = status_as(gateway_bin, runtime, as_user(accounts["outsider"]))
        assert outsider.returncode != 0 and "ermission denied" in outsider.stderr, outsider

        # enroll: a plain member of the service's group is refused, and no window opens.
        member = Enrolment(gateway_bin, config, "--person", "u_member", "--yes", "--json", "--seconds", "60",
                           "--socket", socket_path, prefix=as_user(accounts["member"]))
        enrolments.append(member)
        code, stdout = member.finish()
        assert code == 1 and stdout == "", member.stderr()
        assert "not allowed to enrol through the agent" in member.stderr() and accounts["enrol"] in member.stderr()
        member_uid = pwd.getpwnam(accounts["member"]).pw_uid
        agent.wait_log(rf"enrolment refused to a peer not allowed to enrol uid={member_uid} ", "the refusal in the journal")
        assert "enrolment window open" not in agent.log()

        # root may: its window opens (and runs out).
        root = Enrolment(gateway_bin, config, "--person", "u_root", "--yes", "--seconds", "1", "--socket", socket_path)
        enrolments.append(root)
        code, _ = root.finish()
        assert code == 1 and "window ended without a phone pairing" in root.stderr(), root.stderr()
        agent.wait_log(r"enrolment window open person=u_root ", "root's window")

        # A member of [security] enroll_group may, and is the one who gets the phone's IRK.
        installer = Enrolment(gateway_bin, config, "--person", "u_installer", "--yes", "--json", "--seconds", "60",
                              "--socket", socket_path, prefix=as_user(accounts["installer"]))
        enrolments.append(installer)
        wait_until(installer.is_open, 30, "the installer's window to open")
        connection = world.call(world.pair(GATEWAY_ID, secure_connections=True), timeout=60)
        world.call(world.wait_disconnected(connection, 30), timeout=40)
        code, stdout = installer.finish()
        assert code == 0, installer.stderr() + agent.log()[-3000:]
        assert json.loads(stdout)["person"]["tags"] == [{"id": "phone-u_installer", "irk": world.phone.irk[::-1].hex()}]
    finally:
        for enrolment in enrolments:
            enrolment.kill()
        agent.stop()
