"""A small process, forked before the registry is loaded, that forks handler keepers on request.

Forking the engine itself costs time in proportion to its memory (~25 ms at 700 MB, so 1,000 handler tests
at 50,000 tests cost half a minute); forking this process, which holds only the imported libraries, costs
about a millisecond. Requests travel over a SOCK_SEQPACKET socket with the two pipe ends of the run (the
lifeline's read end, the result's write end), so any process that inherited the socket (doit's -n workers)
can use it; each request becomes a keeper (see `execution.keeper`), which owns and kills the handler's tree. The
zygote ends when every requester has closed the socket, or at once when the engine that forked it dies.
"""

import gc
import json
import os
import signal
import socket
import sys
from typing import Any


MAX_REQUEST = 1 << 20

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
            # Imported here, in the zygote only (once, not per handler): the engine never runs a keeper itself
            # when the zygote does, and a run whose tests are all green runs none (~20 ms of -X importtime).
            from open_agent_compiler.execution import process_tree
            from open_agent_compiler.execution.handler_child import handle  # noqa: F401

            process_tree.die_with_parent(signal.SIGKILL)  # its keepers see their lifelines close and clean up
            _serve(theirs)
        finally:
            os._exit(0)
    theirs.close()
    _client = ours


def running() -> bool:
    """Whether handlers fork from the zygote, which was started before the registry loaded: a handler then never
    sees what the factory left in the engine's memory."""
    return _client is not None


def _serve(sock: socket.socket) -> None:
    gc.freeze()  # what was imported stays put: no collection touches (and copies) those pages in the forks
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # hold none of the caller's pipes open: whoever reads them must see EOF at its exit
        os.dup2(devnull, fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's to handle; we end at EOF
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # likewise a closed terminal
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
        lifeline_fd, result_fd = fds
        if os.fork() == 0:
            sock.close()
            from open_agent_compiler.execution import keeper  # (imported by `start`'s child: a dict lookup)

            keeper.run(json.loads(message), lifeline_fd, result_fd)
        os.close(lifeline_fd)
        os.close(result_fd)


def submit(request: dict[str, Any], lifeline_fd: int, result_fd: int) -> bool:
    """Hand a request to the zygote; False when there is none or the request is too large for one message."""
    if _client is None:
        return False
    message = json.dumps(request, default=str).encode()
    if len(message) > MAX_REQUEST:
        return False
    try:
        socket.send_fds(_client, [message], [lifeline_fd, result_fd])
    except OSError:
        return False
    return True
