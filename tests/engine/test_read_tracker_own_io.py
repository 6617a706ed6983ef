"""The read tracker counts what user code reads, never oac's own file I/O (fsio) that happens meanwhile in
another thread of the engine — e.g. the state flusher opening the results log while a test runs. fsio opens
names relative to a directory fd; seen through the audit hook they looked like reads of `<cwd>/<name>` (here
`<root>/test_results.jsonl`), so a test's key depended on whether its run overlapped such a write."""

import os
import sqlite3
import threading
from pathlib import Path

from engine_project import SUMMARY, Project, summary_line

from open_agent_compiler import fsio
from open_agent_compiler.usercode import reads


def test_fsio_opens_in_any_thread_are_not_reads_and_user_reads_still_are(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "data.txt").write_text("x")
    monkeypatch.chdir(root)
    reads.set_root(root)
    results = root / "results.jsonl"  # a results log outside .oac: a project file, written by oac, read by no one

    def oac_io() -> None:
        os.close(fsio.open_append(root, str(results)))
        os.close(fsio.open_append(root, ".oac/test_results.jsonl"))
        fsio.write_file(root, ".oac/procs/1-a.json", b"{}", durable=False)
        fsio.write_file(root, "out/agent.md", b"text", durable=False)
        assert fsio.inspect(root, "out/agent.md").data == b"text"
        with fsio.exclusive_lock(root, ".oac/compile.lock"):
            pass

    with reads.recording() as read:
        worker = threading.Thread(target=oac_io)
        worker.start()
        worker.join()
        oac_io()
        with open("data.txt") as handle:  # user code's read: still seen
            handle.read()
    assert read == {reads.READ + str(root.resolve() / "data.txt")}


AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, BashToolPermission, CompilationConfig, EqualsEvaluator,
    MockResponse, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolDefinitionLogicBash, ToolTest,
)


def tool(name):
    return ToolDefinition(
        header=ToolDefinitionHeader(name=name, description=name),
        bash_tool=ToolDefinitionLogicBash(permission_bash=BashToolPermission(value="allow", allowed_commands=[name])),
        mock=MockResponse(kind="callable", callable_spec=f"mocks:{name}"),
        tool_tests=[ToolTest(name=f"{name}-ok", input={}, evaluators=(EqualsEvaluator(field="ok", expected=True),))],
    )


def registry():
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"),
                            extra_tools=[tool("first"), tool("second")])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''
MOCKS = '''
import os
import time


def first(payload):
    return {"ok": True}


def second(payload):
    # runs until the engine's state flusher has written first's record: the results log is first opened (by
    # another thread of the engine) while this test's reads are being recorded
    deadline = time.monotonic() + 60
    while not os.path.exists(".oac/test_results.jsonl"):
        if time.monotonic() > deadline:
            return {"ok": False}
        time.sleep(0.01)
    return {"ok": True}
'''


def test_what_oacs_own_threads_open_or_list_while_the_factory_loads_is_no_read(tmp_path: Path,
                                                                               monkeypatch) -> None:
    """The shared-state thread imports its driver while the factory loads; the driver's `importlib.metadata`
    lists every `sys.path` entry, the project root first. That listing made the `factory` key part differ from
    run to run (and checkout to checkout) with the thread's timing. A thread of user code is still seen."""
    import importlib.metadata
    import sys

    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    reads.set_root(root)

    def driver_import(own: bool) -> None:
        if own:
            fsio.own_thread()
        importlib.metadata.version("pydantic")  # lists sys.path: the root too
        os.listdir(root)

    for own, seen in ((True, False), (False, True)):
        importlib.invalidate_caches()  # metadata's lookup of the root is cached by the folder's mtime
        (root / f"new-{own}.txt").write_text("")
        with reads.recording() as read:
            worker = threading.Thread(target=driver_import, args=(own,))
            worker.start()
            worker.join()
        assert (f"dir:{root.resolve()}" in read) is seen, (own, read, sys.path[:2])


def test_a_results_log_written_while_a_test_runs_is_not_part_of_its_key(tmp_path: Path) -> None:
    proj = Project.of(tmp_path / "proj", {"agents.py": AGENTS, "mocks.py": MOCKS})
    done = proj.test()
    assert summary_line(done.stdout) == SUMMARY.format(2, 2, 0, 0, 0), done.stdout + done.stderr
    with sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3") as conn:
        imports = dict(conn.execute("select task_id, imports from doit where task_id like 'test:%'").fetchall())
    assert imports == {"test:prod:tool:first::first-ok": '["mocks.py"]',
                       "test:prod:tool:second::second-ok": '["mocks.py"]'}
