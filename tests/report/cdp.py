"""A headless Chromium driven over the DevTools protocol through `--remote-debugging-pipe` (stdlib only: the
browser reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4).

The browser runs in its own process group; `close()` kills the whole group and reaps it, and `Browser` is a
context manager, so every path out of a test (pass, failed assert, timeout) ends it."""

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--remote-debugging-pipe")


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, binary: str, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="oac-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def wire() -> None:  # in the child: its fd 3 reads our commands, its fd 4 carries its answers
            high_r, high_w = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10), fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3, inheritable=True)
            os.dup2(high_w, 4, inheritable=True)

        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4), start_new_session=True,  # kept open past subprocess's closing
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    # the pipe ------------------------------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CdpError("no answer from Chromium in time")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CdpError(f"Chromium closed the DevTools pipe (exit code {self.proc.poll()})")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, *, session: bool = True) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._to_child, data):]
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CdpError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        deadline = time.monotonic() + self.timeout
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    # a page ---------------------------------------------------------------------------------------------------
    def open_page(self) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise CdpError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click at the middle of the first element matching `selector`."""
        box = self.evaluate(f"(function(){{var e=document.querySelector({json.dumps(selector)});"
                            f"e.scrollIntoView({{block:'center'}});var r=e.getBoundingClientRect();"
                            f"return [r.x+r.width/2,r.y+r.height/2];}})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1})

    def type_into(self, selector: str, text: str) -> None:
        self.click(selector)
        for char in text:  # one key at a time, as a person types: an `input` event per character
            self.send("Input.insertText", {"text": char})

    def console_errors(self) -> list[str]:
        self.evaluate("0")  # flush: events sent before this answer are now in self.events
        errors = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                errors.append(str(params.get("exceptionDetails")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(str(params.get("args")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(str(params["entry"].get("text")))
        return errors

    def screenshot(self, path: Path, width: int = 1200, height: int = 760) -> None:
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False})
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.write_bytes(base64.b64decode(data))

    # the end ----------------------------------------------------------------------------------------------------
    def close(self) -> None:
        for fd in (self._to_child, self._from_child):
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the browser and every helper process it started
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
