"""JUnit XML from a run's tally, for CI systems that display it."""

import io
import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from open_agent_compiler import fsio
from open_agent_compiler.testing.xml_text import xml_safe


def write_junit(path: Path, tally: Any) -> None:
    flaky_fails = getattr(tally, "flaky", 0) if getattr(tally, "flaky_as", "fail") == "fail" else 0
    # not_runnable tests did not run: CI shows them as skipped, never as passed
    suite = ET.Element("testsuite", name="oac", tests=str(len(tally.rows)), failures=str(tally.failed + flaky_fails),
                       skipped=str(tally.skipped + tally.not_runnable), errors=str(len(tally.errors)))
    where: dict[str, tuple[str, int]] = getattr(tally, "where", {})
    for test_id, name, status, duration, message in tally.rows:
        test_id, name, message = xml_safe(test_id), xml_safe(name), xml_safe(message)  # evidence may hold \x1b
        classname, _, _ = test_id.partition("::")
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{duration:.6f}")
        place = where.get(test_id)
        if place is not None:  # where the test is defined (the attributes pytest's and most CI readers know)
            case.set("file", xml_safe(place[0]))
            case.set("line", str(place[1]))
        if status == "flaky":  # it both passed and failed over its --repeat runs
            properties = ET.SubElement(case, "properties")
            ET.SubElement(properties, "property", name="flaky", value="true")
            if flaky_fails:
                ET.SubElement(case, "failure", type="flaky", message=message[:1000]).text = message
            else:
                ET.SubElement(case, "system-out").text = message
        elif status == "fail":
            ET.SubElement(case, "failure", message=message[:1000]).text = message
        elif status in ("skipped", "not_runnable"):
            ET.SubElement(case, "skipped", message=f"{status}: {message}"[:1000])
    buffer = io.BytesIO()
    ET.ElementTree(suite).write(buffer, encoding="utf-8", xml_declaration=True)
    # a regular file with the umask's mode, atomically; a symlink, directory or device at `path` is refused
    absolute = Path(os.path.abspath(path))
    fsio.write_file(fsio.trusted_root(absolute), str(absolute), buffer.getvalue(), show=str(path))
