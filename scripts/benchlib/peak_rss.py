"""Runs a command and reports the peak RSS of that command alone.

Why not simply `os.wait4(Popen(...).pid)`: Linux keeps one `maxrss` per process across
execve, and execve records the high-water mark of the memory map it replaces. Python
starts children with vfork (or fork), so the replaced map is the *benchmark script's*
own: ru_maxrss of the child is then max(script's RSS, command's RSS). A script that has
just generated a 2,000-person capture is itself ~30 MiB, which looked like the agent's
peak. Measured here: `--version` "peaks" at 14 MiB from a fresh Python, 64 MiB
after the script touched 50 MiB, and 8 MiB under GNU time.

The fix: the command is started by a small /bin/sh that forks it in the background and
exits. The forked child has a fresh `maxrss` and its replaced map is the shell's (about
1 MiB). This script is made a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so the
orphaned command is re-parented to it and wait4 returns the command's own rusage.

Second, the executable's own pages count too, and how many of them a run maps depends on
the page cache: a binary just written by the build sits in the cache as large folios
that a page fault maps whole (measured: `--version` 16.7 MiB right after
scripts/build-release, 8.2 MiB once the file's cached pages were dropped). So before each
run the executable's cached pages are dropped (posix_fadvise DONTNEED), as after a boot,
when systemd starts the agent: every measurement starts from the same state.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER = 36


@dataclass
class Measured:
    seconds: float
    peak_rss_kib: int
    exit_code: int
    timed_out: bool


def _become_subreaper() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def drop_cached_pages(path: str) -> None:
    """Asks the kernel to drop the file's clean cached pages (they are read back on use)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def run_measured(command: list[str], stdout=None, stderr=None, timeout: float | None = None,
                 on_started=None) -> Measured:
    """Runs command to its end (SIGTERM after timeout seconds) and returns its own peak RSS.

    command[0] must be a path to the executable (its cached pages are dropped first).
    stdout and stderr are what subprocess.Popen accepts (files, file descriptors, None).
    on_started(pid), if given, is called once the command runs (e.g. to read /proc/PID).
    """
    _become_subreaper()
    drop_cached_pages(command[0])
    read_end, write_end = os.pipe()
    try:
        # The shell forks the command ("$@" &), writes its pid to fd 3 and exits.
        subprocess.run(
            ["/bin/sh", "-c", '"$@" 3>&- & echo $! >&3', "sh", *command],
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, check=True,
            close_fds=False, preexec_fn=lambda: os.dup2(write_end, 3),
        )
    finally:
        os.close(write_end)
    with os.fdopen(read_end) as pid_pipe:
        text = pid_pipe.read().strip()
    if not text.isdigit():
        raise RuntimeError(f"could not start {command[0]}: the launcher said {text!r}")
    pid = int(text)
    if on_started is not None:
        on_started(pid)
    started = time.perf_counter()
    timed_out = False
    while True:
        finished, status, usage = os.wait4(pid, os.WNOHANG)
        if finished:
            break
        if timeout is not None and not timed_out and time.perf_counter() - started > timeout:
            timed_out = True
            os.kill(pid, signal.SIGTERM)
        time.sleep(0.02)
    return Measured(time.perf_counter() - started, usage.ru_maxrss, os.waitstatus_to_exitcode(status), timed_out)
