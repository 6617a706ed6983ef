"""A small process, forked before the registry is loaded, that forks handler children on request.

Forking the engine itself costs time in proportion to its memory (~25 ms at 700 MB, so 1,000 handler tests
at 50,000 tests cost half a minute); forking this process, which holds only the imported libraries, costs
about a millisecond. Requests travel over a SOCK_SEQPACKET socket with the two pipe ends the child answers on,
so any process that inherited the socket (doit's -n workers) can use it; the child writes its pid first so
the requester can kill its process group on timeout. The zygote ends when every requester has closed the
socket.
"""

import json
import os
import signal
import socket
import struct
import sys
from typing import Any

from open_agent_compiler.testing.handler_child import handle

MAX_REQUEST = 1 << 20
PID = struct.Struct("<q")

_client: socket.socket | None = None


def start() -> None:
    """Fork the zygote once per process tree; without fork or SOCK_SEQPACKET, handlers fork directly."""
    global _client
    if _client is not None or not hasattr(os, "fork") or not hasattr(socket, "SOCK_SEQPACKET"):
        return
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            _serve(theirs)
        finally:
            os._exit(0)
    theirs.close()
    _client = ours


def _serve(sock: socket.socket) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # hold none of the caller's pipes open: whoever reads them must see EOF at its exit
        os.dup2(devnull, fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's to handle; we end at EOF
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped automatically
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, MAX_REQUEST, 2)
        except OSError:
            return
        if not message:
            return
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue
        answer_fd, err_fd = fds
        if os.fork() == 0:
            sock.close()
            run_child(json.loads(message), answer_fd, err_fd, announce_pid=True)
        os.close(answer_fd)
        os.close(err_fd)


def run_child(request: dict[str, Any], answer_fd: int, err_fd: int, *, announce_pid: bool) -> None:
    """In a handler child: own process group, prints to the stderr pipe, answer to the answer pipe; exits."""
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if announce_pid:
            os.write(answer_fd, PID.pack(os.getpid()))
        os.dup2(err_fd, 1)
        os.dup2(err_fd, 2)
        sys.stdout = sys.stderr = open(err_fd, "w", buffering=1, closefd=False)
        os.chdir(request["project_root"])
        sys.path.insert(0, request["project_root"])
        data = json.dumps(handle(request), default=str).encode()
        with open(answer_fd, "wb", closefd=False) as pipe:
            pipe.write(data)
        sys.stderr.flush()
    finally:
        os._exit(0)


def submit(request: dict[str, Any], answer_fd: int, err_fd: int) -> bool:
    """Hand a request to the zygote; False when there is none or the request is too large for one message."""
    if _client is None:
        return False
    message = json.dumps(request, default=str).encode()
    if len(message) > MAX_REQUEST:
        return False
    try:
        socket.send_fds(_client, [message], [answer_fd, err_fd])
    except OSError:
        return False
    return True
