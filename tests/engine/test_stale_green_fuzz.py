"""The stale-green fuzzer (issue 32): small random projects built from a catalogue of dependency patterns, random
edits, and after every edit the oracle — every test `oac test` skips has the same outcome under `oac test --force`.

A bounded number of examples runs in the suite (OAC_FUZZ_EXAMPLES, default 2); `doit fuzz` runs many more."""

import os
import shutil
import tempfile
import textwrap
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine_project import ONE_AGENT, Project

EXAMPLES = int(os.environ.get("OAC_FUZZ_EXAMPLES", "2"))
EDITS = int(os.environ.get("OAC_FUZZ_EDITS", "2"))

# name → (module body defining `answer(payload)`, with {d} a data file, {h} a helper module, {t} a tree folder).
# Each answer's value depends on what the pattern reads; the test expects the value of the first run.
PATTERNS: dict[str, str] = {
    "read": 'def answer(payload):\n    with open("data/{d}") as f:\n        return {{"v": f.read()}}\n',
    "lru_cache": ('import functools\n\n\n@functools.lru_cache\ndef _data():\n    with open("data/{d}") as f:\n'
                  '        return f.read()\n\n\ndef answer(payload):\n    return {{"v": _data()}}\n'),
    "global_at_import": 'with open("data/{d}") as f:\n    DATA = f.read()\n\n\ndef answer(payload):\n    return {{"v": DATA}}\n',
    "lazy_import": 'def answer(payload):\n    import {h}\n    return {{"v": {h}.V}}\n',
    "eager_import": 'import {h}\n\n\ndef answer(payload):\n    return {{"v": {h}.V}}\n',
    "import_module": 'import importlib\n\n\ndef answer(payload):\n    return {{"v": importlib.import_module("{h}").V}}\n',
    "symlink": 'def answer(payload):\n    with open("links/{d}") as f:\n        return {{"v": f.read()}}\n',
    "pkgutil": ('import pkgutil\n\n\ndef answer(payload):\n'
                '    return {{"v": pkgutil.get_data("pkg", "{d}").decode()}}\n'),
    "resources": ('import importlib.resources\n\n\ndef answer(payload):\n'
                  '    return {{"v": importlib.resources.files("pkg").joinpath("{d}").read_text()}}\n'),
    "rglob": ('from pathlib import Path\n\n\ndef answer(payload):\n'
              '    return {{"v": ",".join(sorted(p.name for p in Path("{t}").rglob("*")))}}\n'),
    "listdir": 'import os\n\n\ndef answer(payload):\n    return {{"v": ",".join(sorted(os.listdir("{t}")))}}\n',
    "fwalk": ('import os\n\n\ndef answer(payload):\n'
              '    return {{"v": ",".join(sorted(f for _, _, fs, _ in os.fwalk("{t}") for f in fs))}}\n'),
    "dir_fd": ('import os\n\n\ndef answer(payload):\n    fd = os.open("data", os.O_RDONLY)\n    try:\n'
               '        with os.fdopen(os.open("{d}", os.O_RDONLY, dir_fd=fd)) as f:\n            return {{"v": f.read()}}\n'
               '    finally:\n        os.close(fd)\n'),
    "exists": 'import os\n\n\ndef answer(payload):\n    return {{"v": str(os.path.exists("data/{d}"))}}\n',
    "mode": 'import os\n\n\ndef answer(payload):\n    return {{"v": oct(os.stat("data/{d}").st_mode & 0o111)}}\n',
    "factory_global": 'SETTING = None\n\n\ndef answer(payload):\n    return {{"v": SETTING}}\n',
}
DATA = ["a.txt", "b.txt"]
HELPERS = ["h0", "h1"]
TREES = ["tree", "tree/sub"]

AGENTS = '''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, EqualsEvaluator, MockResponse,
    TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)
import json

EXPECTED = json.load(open("expected.json")) if __import__("os").path.exists("expected.json") else {{}}
{factory_globals}

def registry():
{factory_reads}
    tools = [ToolDefinition(header=ToolDefinitionHeader(name=f"t{{i}}", description="d"),
                            mock=MockResponse(kind="callable", callable_spec=f"p{{i}}:answer"),
                            tool_tests=[ToolTest(name=f"t{{i}}", input={{}},
                                                 evaluators=(EqualsEvaluator(field="v", expected=EXPECTED.get(f"t{{i}}", "")),))])
             for i in range({count})]
    return one_agent(tools)
''' + ONE_AGENT

# the edits: each a function of (root, draw-chosen target) that changes the project
EDIT_KINDS = ["content", "add", "delete", "rename", "repoint", "mode"]


def build(root: Path, chosen: list[tuple[str, str, str, str]]) -> None:
    for folder in ("data", "pkg", "links", "tree/sub"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "pkg/__init__.py").write_text("")
    for name in DATA:
        (root / "data" / name).write_text(f"{name}-1")
        (root / "pkg" / name).write_text(f"pkg-{name}-1")
        (root / "links" / name).symlink_to(Path("..") / "data" / name)
    (root / "tree/x.txt").write_text("x")
    (root / "tree/sub/y.txt").write_text("y")
    for helper in HELPERS:
        (root / f"{helper}.py").write_text(f'V = "{helper}-1"\n')
    (root / "settings.txt").write_text("s-1")
    globals_lines, reads = [], []
    for i, (pattern, d, h, t) in enumerate(chosen):
        (root / f"p{i}.py").write_text(PATTERNS[pattern].format(d=d, h=h, t=t))
        if pattern == "factory_global":
            globals_lines.append(f"import p{i}")
            reads.append(f'    p{i}.SETTING = open("settings.txt").read()')
    (root / "agents.py").write_text(AGENTS.format(factory_globals="\n".join(globals_lines),
                                                  factory_reads="\n".join(reads) or "    pass",
                                                  count=len(chosen)))


def outcomes(proj: Project, *extra: str) -> dict[str, str]:
    done = proj.test(*extra, code=None)
    found = {}
    for line in done.stdout.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word in ("pass", "FAIL", "skip") and rest.startswith("'"):
            found[rest[1:].partition("'")[0]] = word
    assert found or done.returncode == 2, done.stdout + done.stderr
    return found


def apply(root: Path, kind: str, pick: int) -> str:
    data = root / "data" / DATA[pick % 2]
    if kind == "content":
        target = [data, root / "pkg" / DATA[pick % 2], root / f"{HELPERS[pick % 2]}.py", root / "settings.txt"][pick % 4]
        if target.exists():
            text = target.read_text()
            target.write_text(text.replace("-1", "-2") if "-1" in text else text.replace("-2", "-1"))
        return f"content {target.relative_to(root)}"
    if kind == "add":
        target = root / TREES[pick % 2] / f"new{pick}.txt"
        target.write_text("n")
        return f"add {target.relative_to(root)}"
    if kind == "delete":
        target = [data, root / TREES[pick % 2] / ("x.txt" if pick % 2 == 0 else "y.txt")][pick % 2]
        if target.exists():
            target.unlink()
        return f"delete {target.relative_to(root)}"
    if kind == "rename":
        if data.exists():
            data.rename(data.with_name("renamed.txt"))
        return f"rename {data.relative_to(root)}"
    if kind == "repoint":
        link = root / "links" / DATA[pick % 2]
        link.unlink(missing_ok=True)
        link.symlink_to(Path("..") / "data" / DATA[(pick + 1) % 2])
        return f"repoint {link.relative_to(root)}"
    if data.exists():
        data.chmod(data.stat().st_mode ^ 0o100)
    return f"mode {data.relative_to(root)}"


pattern_choice = st.tuples(st.sampled_from(sorted(PATTERNS)), st.sampled_from(DATA), st.sampled_from(HELPERS),
                           st.sampled_from(TREES))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("OAC_FUZZ_RANDOM"),
          suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(chosen=st.lists(pattern_choice, min_size=2, max_size=5),
       edits=st.lists(st.tuples(st.sampled_from(EDIT_KINDS), st.integers(0, 11)), min_size=1, max_size=EDITS))
def test_every_skipped_test_has_the_outcome_force_gives_it(chosen: list, edits: list) -> None:
    base = Path(tempfile.mkdtemp(prefix="oac-fuzz-"))
    try:
        root = base / "proj"
        root.mkdir()
        build(root, chosen)
        proj = Project(root)
        first = outcomes(proj)  # with no expectations yet: learn each test's value, then expect it
        import json
        values = {}
        for i, (pattern, d, h, t) in enumerate(chosen):
            values[f"t{i}"] = _value_now(root, i)
        (root / "expected.json").write_text(json.dumps(values))
        assert set(outcomes(proj).values()) <= {"pass"}, (chosen, first)
        done = []
        for kind, pick in edits:
            done.append(apply(root, kind, pick))
            after = outcomes(proj)
            forced = outcomes(proj, "--force")
            stale = {name: forced.get(name) for name, outcome in after.items()
                     if outcome == "skip" and forced.get(name) != "pass"}
            assert not stale, f"stale green after {done} in {chosen}: {stale}"
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _value_now(root: Path, index: int) -> str:
    """What test `index`'s mock answers now, computed in a child (as the engine would, from the project root)."""
    import subprocess
    import sys
    code = textwrap.dedent(f'''
        import json, sys
        sys.path.insert(0, ".")
        import agents
        agents.registry()
        import p{index}
        print(json.dumps(p{index}.answer({{}})["v"]))
    ''')
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    import json
    return json.loads(done.stdout)
