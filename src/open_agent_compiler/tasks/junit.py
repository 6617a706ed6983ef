"""JUnit XML from a run's tally, for CI systems that display it."""

import os
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from open_agent_compiler.testing.xml_text import xml_safe


def write_junit(path: Path, tally: Any) -> None:
    suite = ET.Element("testsuite", name="oac", tests=str(len(tally.rows)), failures=str(tally.failed),
                       skipped=str(tally.skipped + tally.not_runnable), errors=str(len(tally.errors)))
    for test_id, name, status, duration, message in tally.rows:
        test_id, name, message = xml_safe(test_id), xml_safe(name), xml_safe(message)  # evidence may hold \x1b
        classname, _, _ = test_id.partition("::")
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{duration:.6f}")
        if status == "fail":
            ET.SubElement(case, "failure", message=message[:1000]).text = message
        elif status in ("skipped", "not_runnable"):
            ET.SubElement(case, "skipped", message=f"{status}: {message}"[:1000])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".junit-", suffix=".xml")
    with os.fdopen(fd, "wb") as handle:
        ET.ElementTree(suite).write(handle, encoding="utf-8", xml_declaration=True)
    os.replace(tmp, path)
