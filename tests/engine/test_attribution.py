"""Attribution by code, not by clock (issue 32): a read, listing, existence check or import made by user code is
credited to the module whose code made it, and a test's key covers what every module its run reaches read —
whenever that happened. One test per stale-green defect of the issue, each replaying it: after the edit the next
`oac test` runs the test (and it fails, as `--force` shows), never skips it."""

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from engine_project import ONE_AGENT, Project

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse,
    TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)
import m_setting
import helper2  # imported before any test runs: importlib.import_module then fires no event at all
import pkg2.helper  # imported before any test runs: `from . import helper` later finds it in sys.modules

CALLS = ["cached", "cached", "dynamic", "dynamic", "linked", "package_data", "setting", "flag", "walked",
         "relative_fd", "live", "sibling", "walk_project", "pkg2.mock:relative", "dynamic_known",
         "dynamic_low", "dynamic_low"]


def registry():
    with open("settings.txt") as f:  # into a global a mock returns: read by the factory, used by a test
        m_setting.SETTINGS = f.read().strip()
    tools = []
    for i, call in enumerate(CALLS):
        spec = call if ":" in call else f"m_{call}:{call}"  # one module per pattern: what a module read counts
        # for every test that reaches the module
        tools.append(ToolDefinition(
            header=ToolDefinitionHeader(name=f"t{i}", description="d"),
            mock=MockResponse(kind="callable", callable_spec=spec),
            tool_tests=[ToolTest(name=f"t{i}-{call.rpartition(':')[2]}", input={},
                                 evaluators=(EqualsEvaluator(field="v", expected="1"),))]))
    return one_agent(tools)
''' + ONE_AGENT

HEADER = "import functools\nimport importlib\nimport os\nimport pkgutil\n\nSETTINGS = None\n"

MOCKS = '''
@functools.lru_cache
def _fixtures():
    with open("fixtures.json") as f:
        return f.read().strip()


def cached(payload):
    return {"v": _fixtures()}


def dynamic(payload):
    return {"v": importlib.import_module("helper").V}


def dynamic_known(payload):
    return {"v": importlib.import_module("helper2").V}


def dynamic_low(payload):  # neither builtins.__import__ nor importlib.import_module
    return {"v": importlib.__import__("helper3").V}


def linked(payload):
    with open("data/current.txt") as f:
        return {"v": f.read().strip()}


def package_data(payload):
    return {"v": pkgutil.get_data("pkg", "data.txt").decode().strip()}


def setting(payload):
    return {"v": SETTINGS}


def flag(payload):
    return {"v": "0" if os.path.exists("flags/off") else "1"}


def walked(payload):
    return {"v": str(sum(len(files) for _, _, files, _ in os.fwalk("tree")))}


def live(payload):
    with open("live.txt") as f:
        value = f.read().strip()
    with open("live.txt", "w") as f:  # an edit made while the test runs, after its read
        f.write("2")
    return {"v": value}


def relative_fd(payload):
    folder = os.open("tree", os.O_RDONLY)
    try:
        with os.fdopen(os.open("x.txt", os.O_RDONLY, dir_fd=folder)) as f:
            return {"v": f.read().strip()}
    finally:
        os.close(folder)


def sibling(payload):
    with open(os.path.join("..", os.path.basename(os.getcwd()) + "-data", "x.txt")) as f:
        return {"v": "1" if f.read() else "0"}


def walk_project(payload):
    for folder, _, files in os.walk("."):
        for name in files:
            if name == "live.txt":  # (rewritten by every run of t10)
                continue
            with open(os.path.join(folder, name), "rb") as f:
                f.read(1)
    return {"v": "1"}
'''

FILES = {
    "agents.py": AGENTS,
    "fixtures.json": "1\n",
    "helper.py": 'V = "1"\n',
    "helper2.py": 'V = "1"\n',
    "helper3.py": 'V = "1"\n',
    "data/v1.txt": "1\n",
    "data/v2.txt": "2\n",
    "pkg/__init__.py": "",
    "pkg/data.txt": "1\n",
    "settings.txt": "1\n",
    "tree/x.txt": "1\n",
    "live.txt": "1",
    "pkg2/__init__.py": "",
    "pkg2/helper.py": 'V = "1"\n',
    "pkg2/mock.py": "def relative(payload):\n    from . import helper\n    return {'v': helper.V}\n",
}

for _text in MOCKS.strip().split("\n\n\n"):  # one module per function (the cache helper goes with `cached`)
    _name = _text.partition("def ")[2].partition("(")[0]
    if _name == "_fixtures":
        _cache = _text
        continue
    FILES[f"m_{_name}.py"] = HEADER + "\n\n" + (_cache + "\n\n\n" if _name == "cached" else "") + _text + "\n"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One project, run once and green, copied per test (a first run costs the most)."""
    root = tmp_path_factory.mktemp("attr") / "proj"
    proj = Project.of(root, FILES)
    (root / "flags").mkdir()
    (root / "data/current.txt").symlink_to("v1.txt")
    Path(f"{root}-data").mkdir()
    Path(f"{root}-data/x.txt").write_text("1")
    return root


@pytest.fixture
def proj(built: Path, tmp_path: Path) -> Project:
    import shutil
    root = tmp_path / "proj"
    shutil.copytree(built, root, symlinks=True)
    Path(f"{root}-data").mkdir()
    Path(f"{root}-data/x.txt").write_text("1")
    return Project(root)


def outcomes(proj: Project, *extra: str) -> dict[str, str]:
    """test name → pass / FAIL / skip, from `oac test -v`."""
    done = proj.test(*extra, code=None)
    found = {}
    for line in done.stdout.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word in ("pass", "FAIL", "skip") and rest.startswith("'"):
            found[rest[1:].partition("'")[0]] = word
    assert found, done.stdout + done.stderr
    return found


def saved_imports(proj: Project) -> dict[str, list[str]]:
    db = sqlite3.connect(proj.root / ".oac" / "doit-state.sqlite3")
    try:
        return {name.rpartition("::")[2]: json.loads(imports) for name, imports in
                db.execute("select task_id, imports from doit where imports is not null")}
    finally:
        db.close()


def repoint(proj: Project) -> None:
    link = proj.root / "data/current.txt"
    link.unlink()
    link.symlink_to("v2.txt")


DEFECTS: dict[str, tuple[list[str], Callable[[Project], None]]] = {
    "d1_lru_cache_second_test": (["t0-cached", "t1-cached"], lambda p: p.write("fixtures.json", "2\n")),
    "d2_import_module_second_test": (["t2-dynamic", "t3-dynamic"], lambda p: p.write("helper.py", 'V = "2"\n')),
    "d2_import_module_registry_first": (["t14-dynamic_known"],
                                                           lambda p: p.write("helper2.py", 'V = "2"\n')),
    "d2_importlib_dunder_import": (["t15-dynamic_low", "t16-dynamic_low"], lambda p: p.write("helper3.py", 'V = "2"\n')),
    "d3_symlink_repointed": (["t4-linked"], repoint),
    "d4_pkgutil_get_data": (["t5-package_data"], lambda p: p.write("pkg/data.txt", "2\n")),
    "d5_factory_global": (["t6-setting"], lambda p: p.write("settings.txt", "2\n")),
    "d7_fwalk_listing": (["t8-walked"], lambda p: p.write("tree/sub/new.txt", "")),
    "d7_open_dir_fd": (["t9-relative_fd"], lambda p: p.write("tree/x.txt", "2\n")),
    "d8_exists": (["t7-flag"], lambda p: p.write("flags/off", "")),
    "survivor_relative_import": (["t13-relative"], lambda p: p.write("pkg2/helper.py", 'V = "2"\n')),
}


def test_every_test_passes_then_is_green(proj: Project) -> None:
    first = outcomes(proj)
    assert first.pop("t10-live") == "pass"
    assert set(first.values()) == {"pass"}, first
    again = outcomes(proj)
    assert again.pop("t10-live") == "FAIL"  # 6: it changed the file it read while it ran: no green
    assert set(again.values()) == {"skip"}, again  # the project walk (reads .oac/ too) stays green


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_the_edit_reruns_every_test_that_read_it(proj: Project, defect: str) -> None:
    tests, edit = DEFECTS[defect]
    outcomes(proj)
    edit(proj)
    after = outcomes(proj)
    forced = outcomes(proj, "--force")
    for name in tests:
        assert forced[name] == "FAIL", (name, forced)
        assert after[name] == "FAIL", (defect, name, after)
    for name, outcome in after.items():  # the oracle: a skipped test has the outcome --force gives it
        if outcome == "skip":
            assert forced[name] == "pass", (name, after, forced)


def test_a_file_changed_while_the_test_ran_gives_no_green_and_explain_says_so(proj: Project) -> None:
    assert outcomes(proj, "--filter", "t10-live") == {"t10-live": "pass"}
    proj.write("live.txt", "1")  # as it was read: only the change during the run is left to notice
    done = proj.test("--filter", "t10-live", "--explain", code=None)
    assert "live.txt (changed while the test ran)" in done.stdout, done.stdout


def test_reads_outside_the_project_or_under_state_are_not_inputs(proj: Project) -> None:
    outcomes(proj)
    saved = saved_imports(proj)
    assert not any("-data" in path for path in saved["t11-sibling"]), saved["t11-sibling"]  # proj-data next to proj
    walked = saved["t12-walk_project"]
    assert "fixtures.json" in walked and not any(path.startswith(".oac") for path in walked), walked
    assert "pkg2/helper.py" in saved["t13-relative"]  # `from . import helper`, by its full name
