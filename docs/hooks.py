"""mkdocs hook (mkdocs.yml `hooks:`): the reference pages, generated from the code at every build so they cannot
drift — the CLI from the click commands, the `[tool.oac]` keys from `TestOptions` and the compile entries, every
evaluator kind, mock kind and test model field from the pydantic models. Every example on these pages is
validated against the models while the pages are built: an example that stopped being valid fails the build.

`pages()` is plain Python (tests/docs/test_reference.py reads it without mkdocs installed).
"""

import inspect
import re
import tomllib
from pathlib import PurePath
from collections.abc import Callable
from typing import Any

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

REFERENCE = "reference"


# formatting ---------------------------------------------------------------------------------------------------
def type_name(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    text = re.sub(r"<class '([\w.]+)'>", r"\1", text)
    text = re.sub(r"\b(?:[a-z_][\w]*\.)+([A-Za-z_]\w*)", r"\1", text)  # typing.Any -> Any, a.b.Model -> Model
    text = re.sub(r"Annotated\[(\w+), SerializeAsAny\(\)\]", r"\1", text)  # serialisation detail only
    return text.replace("NoneType", "None")


def default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    return f"`{value}`" if isinstance(value, PurePath) else f"`{value!r}`"


def cell(text: Any) -> str:
    """Table-cell text: one line, `|` escaped, HTML-significant characters as entities outside code spans."""
    flat = " ".join(str(text).split()).replace("|", "\\|")
    parts = flat.split("`")
    return "`".join(part if index % 2 else part.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                    for index, part in enumerate(parts))


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def field_table(model: type[BaseModel], skip: tuple[str, ...] = (), notes: dict[str, str] | None = None) -> str:
    rows = []
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        about = field.description or (notes or {}).get(name, "")
        rows.append([f"`{name}`", f"`{cell(type_name(field.annotation))}`", default_text(field), cell(about)])
    return table(["field", "type", "default", "notes"], rows)


def doc(obj: Any) -> str:
    return inspect.cleandoc(obj.__doc__ or "")


def checked_example(source: str, expect: type | tuple[type, ...]) -> str:
    """`source` (a Python expression over the package's public names), evaluated now: it must build `expect`."""
    import open_agent_compiler

    namespace = {name: getattr(open_agent_compiler, name) for name in open_agent_compiler.__all__}
    value = eval(source, namespace)  # noqa: S307 - our own literal examples, at docs build time
    if not isinstance(value, expect):
        raise TypeError(f"docs example builds {type(value).__name__}, not {expect}: {source}")
    return f"```python\n{source.strip()}\n```\n"


# the CLI ----------------------------------------------------------------------------------------------------------
CLI_EXAMPLES = {
    "oac compile": "oac compile agents:registry --config prod --dialect claude --target .",
    "oac info": "oac info agents:registry --dialects",
    "oac test": "oac test agents:registry --config prod --kind tool -v",
    "oac results": "oac results --since 7d --format json",
    "oac report": "oac report -o report.html --since 30d",
}


def _param_type(param: click.Parameter) -> str:
    if isinstance(param, click.Option) and param.is_flag:
        return "flag"
    if isinstance(param.type, click.Choice):
        return " \\| ".join(f"`{choice}`" for choice in param.type.choices)
    return f"`{param.type.name}`" + (" (repeatable)" if getattr(param, "multiple", False) else "")


def _param_default(param: click.Parameter) -> str:
    default = param.default
    if isinstance(param, click.Option) and param.is_flag or not isinstance(default, (str, int, float, PurePath)):
        return "—"  # None, (), or click's own "unset" sentinel
    return f"`{default}`"


def public_options(command: click.Command) -> list[click.Parameter]:
    return [p for p in command.params if not getattr(p, "hidden", False)]


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """A group's commands by name, also of a lazy group (oac's imports each command's module on demand)."""
    context = click.Context(group)
    return {name: command for name in group.list_commands(context)
            if (command := group.get_command(context, name)) is not None}


def commands(group: click.Group, prefix: str = "oac") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in sorted(subcommands(group).items()):
        path = f"{prefix} {name}"
        found.append((path, command))
        if isinstance(command, click.Group):
            found += commands(command, path)
    return found


def cli_page() -> str:
    from open_agent_compiler.cli import oac

    out = ["# CLI reference\n", "Generated from the click commands at docs build time. `oac --version` prints the "
           "version; every command takes `-h`/`--help`. Bad input ends with one line on stderr and exit code 2.\n"]
    for path, command in commands(oac):
        ctx = click.Context(command, info_name=path)
        out.append(f"## `{path}`\n")
        out.append(f"```text\n{command.get_usage(ctx)}\n```\n")
        out.append(doc(command.callback) if command.callback and command.callback.__doc__ else (command.help or ""))
        out.append("")
        rows = []
        for param in public_options(command):
            if isinstance(param, click.Argument):
                rows.append([f"`{param.human_readable_name}` (argument)", _param_type(param),
                             "required" if param.required else "—", ""])
                continue
            assert isinstance(param, click.Option)
            names = ", ".join(f"`{opt}`" for opt in [*param.opts, *param.secondary_opts])
            rows.append([names, _param_type(param), _param_default(param), cell(param.help or "")])
        if rows:
            out.append(table(["option", "type", "default", "description"], rows))
        if isinstance(command, click.Group) and subcommands(command):
            out.append("Subcommands: " + ", ".join(f"`{path} {name}`" for name in sorted(subcommands(command)))
                       + ".\n")
        if path in CLI_EXAMPLES:
            out.append(f"Example:\n\n```console\n$ {CLI_EXAMPLES[path]}\n```\n")
    return "\n".join(out)


# [tool.oac] --------------------------------------------------------------------------------------------------------
CONFIG_EXAMPLE = """\
[tool.oac]
factory = "agents:registry"
config = "prod"
dialect = "opencode"
results = ".oac/test_results.jsonl"
force = false
filter = ["lint"]
kind = ["tool", "capability"]
variant = "nightly"
jobs = 2
timeout = 30.0
hermetic = true
strict = true
junit = "reports/oac.xml"
explain = false
verbose = true
invoker = "scripted"
invoker_script = "agents_scripts:SCRIPTS"
judge = "judges:make_judge"
target = "."

[[tool.oac.compile]]
config = "prod"
dialect = "claude"
target = "."
"""
KEY_NOTES = {  # keys with no `oac test` flag of the same name
    "factory": "`FACTORY` argument: module:callable returning the AgentRegistry, imported from the project root.",
    "invoker_script": "module:attribute holding the scripted invoker's model scripts (no flag).",
    "target": "`oac compile` only: directory to compile into, relative to the project root.",
    "compile": "`doit compile` / `oac compile` with no arguments: a list of `[[tool.oac.compile]]` entries "
               "(fields below).",
    "judge": "module:factory of the LLM judge, or a `[tool.oac.judge]` table for the built-in HTTP judge.",
}
READ_BY = {"factory": "test, compile, info", "config": "test, compile", "dialect": "test, compile",
           "target": "compile", "compile": "compile, doit compile", "results": "test, results, report"}


def config_keys() -> list[str]:
    from open_agent_compiler.tasks.settings import COMPILE_ONLY_KEYS, TestOptions

    return [name for name in TestOptions.model_fields if name != "project_root"] + list(COMPILE_ONLY_KEYS)


def config_page() -> str:
    from open_agent_compiler.cli.test_cmd import test_command
    from open_agent_compiler.tasks.compile_tasks import CompileEntry
    from open_agent_compiler.tasks.settings import COMPILE_ONLY_KEYS, TestOptions

    example = tomllib.loads(CONFIG_EXAMPLE)["tool"]["oac"]
    TestOptions(**{k: v for k, v in example.items() if k not in COMPILE_ONLY_KEYS})  # the example is valid
    for entry in example["compile"]:
        CompileEntry(**entry)
    flags = {opt.lstrip("-").replace("-", "_"): p for p in test_command.params if isinstance(p, click.Option)
             for opt in p.opts if opt.startswith("--")}
    rows = []
    for key in config_keys():
        field = TestOptions.model_fields.get(key)
        kind = f"`{cell(type_name(field.annotation))}`" if field else ("`str`" if key == "target" else "array of tables")
        default = default_text(field) if field else ("project root" if key == "target" else "`[]`")
        flag = flags.get(key)
        about = KEY_NOTES.get(key) or (f"`--{key.replace('_', '-')}`: {flag.help}" if flag else "")
        shown = example.get(key)
        sample = "`[[tool.oac.compile]]`" if key == "compile" else f"`{key} = {_toml(shown)}`"
        rows.append([f"`{key}`", kind, default, READ_BY.get(key, "test"), cell(about), sample])
    return "\n".join([
        "# `[tool.oac]` keys\n",
        "Generated from `TestOptions` (tasks/settings.py) and `CompileEntry` (tasks/compile_tasks.py) at docs build "
        "time. `oac` finds the first `pyproject.toml` with a `[tool.oac]` table from the current directory upwards "
        "(stopping at the repository root); its folder is the project root and relative paths in the table are "
        "relative to it. A flag on the command line wins over the table; both go through the same validation, and "
        "an unknown key is refused naming it. Dashes in keys are read as underscores.\n",
        table(["key", "type", "default", "read by", "meaning", "example"], rows),
        "## `[[tool.oac.compile]]` entries\n",
        field_table(CompileEntry),
        "## A complete table\n",
        "Every key at once (validated when these pages are built):\n",
        f"```toml\n{CONFIG_EXAMPLE}```\n",
    ])


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


# evaluators ----------------------------------------------------------------------------------------------------------
EVALUATOR_EXAMPLES = {
    "equals": 'EqualsEvaluator(field="answer", expected="ABC")',
    "substring": 'SubstringEvaluator(needle="approved", case_sensitive=False)',
    "regex": r'RegexEvaluator(pattern=r"^PR #\d+ reviewed", flags=["IGNORECASE"])',
    "json_path": 'JsonPathEvaluator(path="result.items[0].status", expected="ok")',
    "tool_called": 'ToolCalledEvaluator(tool_name="lint-py", with_args_subset={"path": "app.py"}, min_count=1)',
    "tool_not_called": 'ToolNotCalledEvaluator(tool_name="git-push")',
    "path_order": 'PathOrderEvaluator(steps=("fetch-diff", "lint-py", "post-comment"))',
    "permission_present": 'PermissionPresentEvaluator(bash_pattern="python scripts/lint_py.py *")',
    "permission_absent": 'PermissionAbsentEvaluator(permission_key="webfetch")',
    "llm_judge": 'LLMJudgeEvaluator(criteria="The review names the failing line.", pass_threshold=0.7)',
    "fact_recall": 'FactRecallEvaluator(facts=(FactSpec(any_of=("line 12", "L12")), "unused import"), '
                   'forbidden=("LGTM",))',
}


def evaluator_kinds() -> dict[str, type[BaseModel]]:
    from open_agent_compiler.model.core.evaluator import Evaluator
    from open_agent_compiler.testing import evaluation  # noqa: F401  (registers every kind)

    # the built-in kinds only: a project's own kinds register in the same table when its code is loaded
    return {kind: cls for kind, cls in sorted(Evaluator.kinds.items())
            if cls.__module__.startswith("open_agent_compiler.")}


def evaluators_page() -> str:
    from open_agent_compiler.model.core.evaluator import Evaluator, EvaluatorResult, FactSpec

    out = ["# Evaluators\n",
           "Generated from the evaluator classes at docs build time. An evaluator scores a tool's output or an agent's "
           "turn; it may also *skip* (it had nothing to look at), which counts neither way unless every evaluator of "
           "a test skipped. In JSON/dict form an evaluator is chosen by its `kind`. Every class below takes `name` "
           "(shown in evidence; defaults to the kind). Examples are built while these pages are built.\n"]
    for kind, cls in evaluator_kinds().items():
        out.append(f"## `{kind}` — `{cls.__name__}`\n")
        out.append(doc(cls) + "\n")
        out.append(field_table(cls, skip=("kind",)))
        out.append(checked_example(EVALUATOR_EXAMPLES[kind], Evaluator))
    out.append("## `FactSpec`\n\n" + doc(FactSpec) + "\n\n" + field_table(FactSpec))
    out.append("## `EvaluatorResult` (what each evaluator returns; the evidence of a record)\n\n"
               + field_table(EvaluatorResult))
    return "\n".join(out)


# mocks -----------------------------------------------------------------------------------------------------------
MOCK_EXAMPLES = {
    "fixed": 'MockResponse(kind="fixed", fixed_output={"status": "ok", "issues": []})',
    "sequence": 'MockResponse(kind="sequence", sequence=({"state": "pending"}, {"state": "done"}))',
    "callable": 'MockResponse(kind="callable", callable_spec="review_mocks:lint")',
    "stateful_callable": 'MockResponse(kind="stateful_callable", callable_spec="review_mocks:post_comment")',
    "echo": 'MockResponse(kind="echo")',
}
MOCK_MEANING = {
    "fixed": "always answers `fixed_output` (a deep copy).",
    "sequence": "call N answers `sequence[N]`; past the end, the last item. An item may itself be a `MockResponse`.",
    "callable": "`callable_spec` (`module:function`, imported from the project root) is called with the tool's "
                "input (a dict) and its return value is the output.",
    "stateful_callable": "like `callable`, called as `function(input, state)` with a `MockState` that persists for "
                         "one test (one session): `state.call_index`, `state.scratchpad`.",
    "echo": "answers the input unchanged.",
}


def mock_kinds() -> list[str]:
    from typing import get_args

    from open_agent_compiler.model.core.mock import MockKind

    return list(get_args(MockKind))


def mocks_page() -> str:
    from open_agent_compiler.model.core.mock import MockProfile, MockResponse, MockState

    out = ["# Mock kinds\n",
           "Generated from `MockResponse` (model/core/mock.py) at docs build time. A tool's `mock` answers instead of "
           "its real handler in tool and agent tests; a `MockProfile` overrides mocks per tool for tests that name "
           "it (`mock_profile`). Examples are validated while these pages are built.\n",
           table(["kind", "behaviour"], [[f"`{kind}`", cell(MOCK_MEANING[kind])] for kind in mock_kinds()])]
    for kind in mock_kinds():
        out.append(f"## `{kind}`\n\n{MOCK_MEANING[kind]}\n")
        out.append(checked_example(MOCK_EXAMPLES[kind], MockResponse))
    out.append("## `MockResponse` fields\n\n" + field_table(MockResponse))
    out.append("## `MockProfile`\n\n" + doc(MockProfile) + "\n\n" + field_table(MockProfile))
    out.append(checked_example('MockProfile(name="ci", responses={"fetch-diff": MockResponse(kind="fixed", '
                               'fixed_output={"diff": ""})})', MockProfile))
    out.append("## `MockState` (what a `stateful_callable` receives)\n\n" + doc(MockState) + "\n\n"
               + field_table(MockState))
    out.append("```python\n# review_mocks.py\ndef post_comment(payload, state):\n"
               "    state.scratchpad.setdefault(\"comments\", []).append(payload[\"body\"])\n"
               "    return {\"id\": state.call_index + 1, \"total\": len(state.scratchpad[\"comments\"])}\n```\n")
    return "\n".join(out)


# test models -------------------------------------------------------------------------------------------------------
TEST_EXAMPLES = {
    "CapabilityTest": 'CapabilityTest(name="may-lint-not-push", must_have_bash_patterns=("python scripts/lint_py.py *",), '
                      'must_not_have_tools=("git-push",))',
    "ToolTest": 'ToolTest(name="lint-flags-unused-import", input={"source": "import os"}, '
                'evaluators=(SubstringEvaluator(needle="unused import"),))',
    "AgentTest": 'AgentTest(name="three-turn-review", turns=(Turn(prompt="Fetch PR 7", expected_tool_calls=("fetch-diff",)), '
                 'Turn(prompt="Lint it", expected_tool_calls=("lint-py",)), Turn(prompt="Post the review", '
                 'evaluators=(ToolCalledEvaluator(tool_name="post-comment"),))))',
    "Turn": 'Turn(prompt="Lint it", expected_tool_calls=("lint-py",))',
}


def test_models() -> dict[str, type[BaseModel]]:
    from open_agent_compiler.model.core.test_model import AgentTest, CapabilityTest, ToolTest, Turn

    return {"CapabilityTest": CapabilityTest, "ToolTest": ToolTest, "AgentTest": AgentTest, "Turn": Turn}


def test_models_page() -> str:
    out = ["# Test models\n",
           "Generated from model/core/test_model.py at docs build time. `CapabilityTest`s sit on "
           "`AgentDefinition.capability_tests`, `ToolTest`s on `ToolDefinition.tool_tests` (or on an agent with "
           "`tool` set), `AgentTest`s on `AgentDefinition.agent_tests`. Examples are built while these pages are "
           "built.\n"]
    for name, model in test_models().items():
        out.append(f"## `{name}`\n\n{doc(model)}\n")
        out.append(field_table(model))
        out.append(checked_example(TEST_EXAMPLES[name], model))
    return "\n".join(out)


# the hook ------------------------------------------------------------------------------------------------------------
PAGES: dict[str, Callable[[], str]] = {
    f"{REFERENCE}/cli.md": cli_page,
    f"{REFERENCE}/configuration.md": config_page,
    f"{REFERENCE}/evaluators.md": evaluators_page,
    f"{REFERENCE}/mocks.md": mocks_page,
    f"{REFERENCE}/test-models.md": test_models_page,
}


def pages() -> dict[str, str]:
    return {path: build() for path, build in PAGES.items()}


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for path, text in pages().items():
        files.append(File.generated(config, path, content=text))
    return files
