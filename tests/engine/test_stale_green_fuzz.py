"""The stale-green fuzzer (issue 32): small random projects built from a catalogue of dependency patterns, each
placed in one kind of user code, random edits, and after every edit the oracle — every test `oac test` skips has
the same outcome under `oac test --force`.

A project is a list of tests, each a (pattern, kind, data file, helper module, tree folder). The pattern's module
(`PATTERNS`: a body defining `answer(payload)`, whose value depends on what it reads) sits in the kind's code
(`KINDS`: what is appended to that body, and how the test uses it; the wiring is guard_project's): a callable mock,
a real handler (a ScriptTool handler script), a custom evaluator class, a model script of the scripted invoker
(`invoker_script` in [tool.oac]) or a `--judge judgemod:make` judge. The data files, helper modules and trees are
few, so tests of different kinds share them.

A bounded number of examples runs in the suite (OAC_FUZZ_EXAMPLES, default 2); `doit fuzz` runs many more."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from engine_project import Project

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
# Shared readers (one module each, every test of the pattern calls it): `read(path)` returns the file's text, some
# keeping it by path, each in another place. A test whose read another test's call made is keyed on it only if
# the read is credited to the module (a read held for one test alone would leave the other green: a stale green).
SET = "            dict.__init__({box}, {{path: f.read()}})\n"  # stores past the code scan (merges in place: no
KEEP = ""  # store op, no in-place operator, no mutating name)


def _keeper(box: str, head: str = "", indent: str = "") -> str:
    body = (f"def read(path):\n    if path not in {box}:\n        with open(path) as f:\n" + SET.format(box=box)
            + f"    return {box}[path]\n")
    return KEEP + head + "".join(indent + line if line else line for line in body.splitlines(True))


# Each kept reader is caught by one rule of `usercode.private_reads` alone (the others see nothing to keep).
READERS: dict[str, str] = {
    "plain": 'from pathlib import Path\n\n\ndef read(path):\n    return Path(path).read_text()\n',  # held
    "dict": _keeper("BOX", "BOX = {}\n\n\n"),  # a mutable global
    "default": _keeper("box").replace("def read(path)", "def read(path, box={})"),  # a mutable default
    "closure": (_keeper("box", "def _make():\n    box = {}\n\n", "    ") + "    return read\n\n\nread = _make()\n"),
    "klass": _keeper("Box.data", "class Box:\n    data = {}\n\n\n"),  # a class of its own
    "attr": _keeper("read.__dict__"),  # a function given an attribute: only the look after the test sees it
    "scan": ('import os\n\n\ndef read(path):\n    key = "OAC_FUZZ_" + path.replace("/", "_").replace(".", "_")\n'
             '    if key not in os.environ:\n        with open(path) as f:\n            os.environ[key] = f.read()\n'
             '    return os.environ[key]\n'),  # a store into a library's object: the code scan
    "lru": 'import functools\n\n\n@functools.lru_cache\ndef read(path):\n    with open(path) as f:\n        return f.read()\n',
    "linecache": 'import linecache\n\n\ndef read(path):\n    return linecache.getline(path, 1)\n',  # a library reads
    "elsewhere": ('import reader_store\n\n\ndef read(path):\n    if not reader_store.has(path):\n'
                  '        with open(path) as f:\n            reader_store.put(path, f.read())\n'
                  '    return reader_store.get(path)\n'),  # kept by a project module it refers to
    "lazy": ('def read(path):\n    import reader_lazy_store\n    if not reader_lazy_store.has(path):\n'
             '        with open(path) as f:\n            reader_lazy_store.put(path, f.read())\n'
             '    return reader_lazy_store.get(path)\n'),  # ... it imported (an import edge)
    "lazy_after": ('import sys\n\n\ndef read(path):\n    store = sys.modules.get("reader_late_store")\n'
                   '    if store is not None and store.has(path):\n        return store.get(path)\n'
                   '    with open(path) as f:\n        text = f.read()\n    import reader_late_store\n'
                   '    reader_late_store.put(path, text)\n    return text\n'),  # ... imported after the read
    "made": ('import builtins\n\n\n' + _keeper("box", "def _make():\n    box = {}\n\n", "    ")
             + "    return read\n\n\nbuiltins.oac_fuzz_reader = _make()\n\n\n"
             "def read(path):\n    return builtins.oac_fuzz_reader(path)\n"),  # a closure no global holds
    "generator": ('import builtins\n\n\ndef _serve():\n    box, path = {}, (yield)\n    while True:\n'
                  '        if path not in box:\n            with open(path) as f:\n'
                  '                box = {**box, path: f.read()}\n        path = (yield box[path])\n\n\n'
                  'builtins.oac_fuzz_server = _serve()\nnext(builtins.oac_fuzz_server)\n\n\n'
                  'def read(path):\n    return builtins.oac_fuzz_server.send(path)\n'),  # a generator's frame keeps it
    "partial": ('import builtins\nimport functools\nimport operator\n\n\n'
                + _keeper("box").replace("def read(path)", "def _load(box, path)").replace(
                    "dict.__init__(box, {path: f.read()})", "operator.setitem(box, path, f.read())")
                + '\n\nbuiltins.oac_fuzz_partial = functools.partial(_load, {})\n\n\n'
                'def read(path):\n    return builtins.oac_fuzz_partial(path)\n'),  # an argument it stores into (setitem)
    "in_place": ('import builtins\nimport functools\n\n\ndef _load(box, path):\n    if path not in box:\n'
                 '        with open(path) as f:\n            box |= {path: f.read()}\n    return box[path]\n\n\n'
                 'builtins.oac_fuzz_in_place = functools.partial(_load, {})\n\n\n'
                 'def read(path):\n    return builtins.oac_fuzz_in_place(path)\n'),  # ... or updates in place (|=)
    "callback": ('import os\nimport sys\n\nsys.path.append(os.path.join(os.path.dirname(__file__), "site-packages"))\n'
                 'import memo_lib\n\n\ndef _load(path):\n    with open(path) as f:\n        return f.read()\n\n\n'
                 'def read(path):\n    return memo_lib.memo(_load, path)\n'),  # a library keeps what project code read
}
MEMO_LIB = 'CACHE = {}\n\n\ndef memo(load, key):\n    if key not in CACHE:\n        CACHE[key] = load(key)\n    return CACHE[key]\n'
STORE = 'BOX = {}\n\n\ndef has(path):\n    return path in BOX\n\n\ndef put(path, text):\n    BOX[path] = text\n\n\ndef get(path):\n    return BOX[path]\n'
for _reader in READERS:
    PATTERNS[f"reader_{_reader}"] = (f"import reader_{_reader}\n\n\ndef answer(payload):\n"
                                     f'    return {{{{"v": reader_{_reader}.read("data/{{d}}")}}}}\n')
DATA = ["a.txt", "b.txt"]
HELPERS = ["h0", "h1"]
TREES = ["tree", "tree/sub"]

# kind → what follows the pattern's body in test N's module ("@N@" is N). Every kind wraps `answer`'s value.
KINDS: dict[str, str] = {
    "mock": "",  # the tool's mock is `pN:answer`
    "handler": '''
from pydantic import BaseModel
from open_agent_compiler import ScriptTool


class Empty(BaseModel):
    pass


class Out(BaseModel):
    v: str


class Tool(ScriptTool[Empty, Out]):
    name = "t@N@"

    def execute(self, input):
        return Out(v=str(answer({})["v"]))
''',
    "evaluator": '''
from typing import Literal
from open_agent_compiler.model.core.evaluator import Evaluator


class Check(Evaluator):
    kind: Literal["fuzz-@N@"] = "fuzz-@N@"
    expected: str = ""

    def evaluate(self, context):
        got = str(answer({})["v"])
        return self.result(got == self.expected, f"got {got!r} want {self.expected!r}")
''',
    "script": '''
from open_agent_compiler.testing.invokers.script import reply


def script(view):
    return reply("<" + str(answer({})["v"]) + ">")
''',
    "judge": '''
def verdict(want):
    ok = str(answer({})["v"]) == want
    return {"pass": ok, "score": 1.0 if ok else 0.0, "reasoning": "fuzz"}
''',
}
# a handler runs in its own process, which never runs the factory: a factory global does not reach it
NOT_IN = {("factory_global", "handler")}

# test N of each kind, in agents.py (@E@ is its expected value)
TEST_OF = {
    "mock": ('tool(@N@, mock=MockResponse(kind="callable", callable_spec="p@N@:answer"), '
             'evaluators=(EqualsEvaluator(field="v", expected=@E@),))'),
    "handler": 'tool(@N@, handler_script="handlers/p@N@.py", evaluators=(EqualsEvaluator(field="v", expected=@E@),))',
    "evaluator": 'tool(@N@, mock=MockResponse(fixed_output={"x": 1}), evaluators=(p@N@.Check(expected=@E@),))',
    "script": 'AgentTest(name="t@N@", prompt="hi", evaluators=(SubstringEvaluator(needle="<" + @E@ + ">"),))',
    "judge": ('tool(@N@, mock=MockResponse(fixed_output={"x": 1}), '
              'evaluators=(LLMJudgeEvaluator(criteria="p@N@=" + @E@),))'),
}

AGENTS = '''
import json
import os

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, CompilationConfig, EqualsEvaluator, LLMJudgeEvaluator,
    MockResponse, ModelParameters, SubstringEvaluator, TemplateSlot, TemplateTree, ToolDefinition,
    ToolDefinitionHeader, ToolTest,
)
{imports}

EXPECTED = json.load(open("expected.json")) if os.path.exists("expected.json") else {{}}


def tool(n, evaluators, **kw):
    return ToolDefinition(header=ToolDefinitionHeader(name=f"t{{n}}", description="d"), **kw,
                          tool_tests=[ToolTest(name=f"t{{n}}", input={{}}, evaluators=evaluators)])


def registry():
{factory_reads}
    tools, agent_tests = [], []
{tests}
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), extra_tools=tools,
                            agent_tests=agent_tests)
    reg = AgentRegistry()
    reg.register_agent("a", agent, ModelParameters(model_name="test/model-a"))
    reg.register_template(TemplateTree(name="tpl", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''

JUDGEMOD = '''
{imports}

MODULES = {{{modules}}}


class Judge:
    def judge(self, *, criteria, target, model=None):
        name, _, want = criteria.partition("=")
        return MODULES[name].verdict(want)


def make():
    return Judge()
'''

PYPROJECT = '''
[tool.oac]
factory = "agents:registry"
config = "prod"
invoker_script = "scripts_mod:SCRIPTS"
'''
RUN = ("--invoker", "scripted", "--judge", "judgemod:make")  # every `oac test` of a fuzzed project

# the edits: each a function of (root, draw-chosen target) that changes the project
EDIT_KINDS = ["content", "add", "delete", "rename", "repoint", "mode"]


def module_of(index: int, kind: str) -> str:
    return f"handlers/p{index}.py" if kind == "handler" else f"p{index}.py"


def build(root: Path, chosen: list[tuple[str, str, str, str, str]]) -> None:
    for folder in ("data", "pkg", "links", "tree/sub", "handlers"):
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
    for reader, source in READERS.items():
        (root / f"reader_{reader}.py").write_text(source)
    for store in ("reader_store", "reader_lazy_store", "reader_late_store"):
        (root / f"{store}.py").write_text(STORE)
    (root / "site-packages").mkdir()  # a library's place: not the project's code
    (root / "site-packages" / "memo_lib.py").write_text(MEMO_LIB)
    (root / "settings.txt").write_text("s-1")
    (root / "pyproject.toml").write_text(PYPROJECT)
    imports, reads, tests = [], [], []
    of_kind: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for i, (pattern, kind, d, h, t) in enumerate(chosen):
        body = PATTERNS[pattern].format(d=d, h=h, t=t) + KINDS[kind].replace("@N@", str(i))
        (root / module_of(i, kind)).write_text(body)
        of_kind[kind].append(i)
        if kind == "evaluator" or pattern == "factory_global":  # the others are loaded by their own loaders
            imports.append(f"import p{i}")
        if pattern == "factory_global":
            reads.append(f'    p{i}.SETTING = open("settings.txt").read()')
        into = "agent_tests" if kind == "script" else "tools"
        test = TEST_OF[kind].replace("@N@", str(i)).replace("@E@", f'EXPECTED.get("t{i}", "?")')
        tests.append(f"    {into}.append({test})")
    (root / "agents.py").write_text(AGENTS.format(imports="\n".join(imports), factory_reads="\n".join(reads),
                                                  tests="\n".join(tests)))
    scripts = of_kind["script"]
    (root / "scripts_mod.py").write_text("".join(f"import p{i}\n" for i in scripts)
                                         + "\nSCRIPTS = {" + ", ".join(f'"t{i}": p{i}.script' for i in scripts) + "}\n")
    judged = of_kind["judge"]
    (root / "judgemod.py").write_text(JUDGEMOD.format(imports="\n".join(f"import p{i}" for i in judged),
                                                      modules=", ".join(f'"p{i}": p{i}' for i in judged)))


def outcomes(proj: Project, *extra: str) -> dict[str, str]:
    done = proj.test(*RUN, *extra, code=None)
    found = {}
    for line in done.stdout.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word in ("pass", "FAIL", "skip") and rest.startswith("'"):
            found[rest[1:].partition("'")[0]] = word
    assert found or done.returncode == 2, done.stdout + done.stderr
    return found


def apply(root: Path, kind: str, pick: int) -> str:
    """Edit the project: `pick` (0-15) chooses the target, `pick // 4 % 2` which data file or helper."""
    which, name = pick % 4, DATA[pick // 4 % 2]
    data = root / "data" / name
    if kind == "content":
        target = [data, root / "pkg" / name, root / f"{HELPERS[pick // 4 % 2]}.py", root / "settings.txt"][which]
        if target.exists():
            text = target.read_text()
            target.write_text(text.replace("-1", "-2") if "-1" in text else text.replace("-2", "-1"))
        return f"content {target.relative_to(root)}"
    if kind == "add":
        target = root / TREES[which % 2] / f"new{pick}.txt"
        target.write_text("n")
        return f"add {target.relative_to(root)}"
    if kind == "delete":
        target = [data, data, root / "tree/x.txt", root / "tree/sub/y.txt"][which]
        if target.exists():
            target.unlink()
        return f"delete {target.relative_to(root)}"
    if kind == "rename":
        if data.exists():
            data.rename(data.with_name("renamed.txt"))
        return f"rename {data.relative_to(root)}"
    if kind == "repoint":
        link = root / "links" / name
        link.unlink(missing_ok=True)
        link.symlink_to(Path("..") / "data" / DATA[1 - DATA.index(name)])
        return f"repoint {link.relative_to(root)}"
    if data.exists():
        data.chmod(data.stat().st_mode ^ 0o100)
    return f"mode {data.relative_to(root)}"


test_choice = st.tuples(st.sampled_from(sorted(PATTERNS)), st.sampled_from(sorted(KINDS)), st.sampled_from(DATA),
                        st.sampled_from(HELPERS), st.sampled_from(TREES)).filter(lambda c: c[:2] not in NOT_IN)


def check(chosen: list, edits: list) -> None:
    """Build the project of `chosen`, learn each test's value and expect it, then after each of `edits` assert
    the oracle."""
    base = Path(tempfile.mkdtemp(prefix="oac-fuzz-"))
    try:
        root = base / "proj"
        root.mkdir()
        build(root, chosen)
        proj = Project(root)
        values = {f"t{i}": _value_now(root, i, kind) for i, (_, kind, *_) in enumerate(chosen)}
        (root / "expected.json").write_text(json.dumps(values))
        first = outcomes(proj)
        assert set(first.values()) == {"pass"} and len(first) == len(chosen), (chosen, first)
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


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("OAC_FUZZ_RANDOM"),
          suppress_health_check=list(HealthCheck), phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(chosen=st.lists(test_choice, min_size=2, max_size=5),
       edits=st.lists(st.tuples(st.sampled_from(EDIT_KINDS), st.integers(0, 15)), min_size=1, max_size=EDITS))
# every kind once, reading at load time where it can (the key parts of handler imports, evaluator files, the
# model script and the judge), sharing a helper and a data file: h0 edited (four kinds), then data/b.txt (the mock)
@example(chosen=[("symlink", "mock", "b.txt", "h0", "tree"), ("eager_import", "handler", "a.txt", "h0", "tree"),
                 ("eager_import", "evaluator", "a.txt", "h0", "tree"), ("eager_import", "script", "b.txt", "h0", "tree"),
                 ("eager_import", "judge", "a.txt", "h0", "tree")],
         edits=[("content", 2), ("content", 4)])
# found while building it: a judge answering from a global the factory filled was skipped after the file the
# factory read changed (a judged test with a fixed mock had no files part, so no factory part, and its key was kept)
@example(chosen=[("factory_global", "judge", "a.txt", "h0", "tree"), ("read", "mock", "a.txt", "h0", "tree")],
         edits=[("content", 3)])
# every shared reader read by two tests (the first run fills a kept reader, the second answers from it), then the
# file both read changes: a read held for the first test alone leaves the second green (plain: each keeps its own)
@example(chosen=[(f"reader_{reader}", "mock", "a.txt", "h0", "tree") for reader in READERS for _ in range(2)],
         edits=[("content", 0)])
def test_every_skipped_test_has_the_outcome_force_gives_it(chosen: list, edits: list) -> None:
    check(chosen, edits)


def _value_now(root: Path, index: int, kind: str) -> str:
    """What test `index`'s pattern answers now, computed in a child as the engine would: from the project root,
    after the factory ran (a handler's script is loaded from its file, in a process with no factory)."""
    if kind == "handler":
        load = (f'import importlib.util\nspec = importlib.util.spec_from_file_location("p{index}", '
                f'"handlers/p{index}.py")\nmod = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(mod)\n')
    else:
        load = f"import agents\nagents.registry()\nimport p{index} as mod\n"
    code = "import json, sys\nsys.path.insert(0, '.')\n" + load + 'print(json.dumps(str(mod.answer({})["v"])))\n'
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
