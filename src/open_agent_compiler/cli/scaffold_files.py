"""The files `oac init` writes: a small project that passes `oac test` and `doit test` as it is.

`__OAC_PROJECT__` is replaced by the project's name (its folder's)."""

FILES: dict[str, str] = {
    'agents.py': '''\
# agents.py — one agent, two tools, every kind of test. Made by `oac init`; run `oac test` (or `doit test`).
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, BashToolPermission, CapabilityTest, CompilationConfig,
    EqualsEvaluator, JsonToolPermission, MockProfile, MockResponse, ModelParameters, PermissionAbsentEvaluator,
    ScriptDefinition, SubstringEvaluator, TemplateSlot, TemplateTree, ToolCalledEvaluator, ToolDefinition,
    ToolDefinitionHeader, ToolDefinitionLogicBash, ToolDefinitionLogicJson, ToolScriptDefinition, ToolTest, Turn,
)


def word_count() -> ToolDefinition:
    """A JSON tool with a real handler: tools/word_count.py, copied to scripts/ in the compiled project."""
    return ToolDefinition(
        header=ToolDefinitionHeader(name="word-count", description="Count the words of a text.",
                                    usage_explanation_short="count words"),
        json_tool=ToolDefinitionLogicJson(
            permission_json=JsonToolPermission(value="allow", allowed_commands=["python3 scripts/word_count.py *"]),
            input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            output_schema={"type": "object", "properties": {"words": {"type": "integer"}}, "required": ["words"]},
            tool_scripts=[ToolScriptDefinition(scripts=[ScriptDefinition(
                target_file_path="scripts/word_count.py", source_file_path="tools/word_count.py")])],
        ),
        handler_script="tools/word_count.py",  # no mock: tool tests run this real handler
        tool_tests=[ToolTest(name="counts-words", input={"text": "one two three"},
                             evaluators=(EqualsEvaluator(field="words", expected=3),))],
    )


def save_note() -> ToolDefinition:
    """A bash tool answered by a mock: a `stateful_callable` (mocks.py) that remembers notes within one test."""
    return ToolDefinition(
        header=ToolDefinitionHeader(name="save-note", description="Save a note; answers how many are saved.",
                                    usage_explanation_short="save a note"),
        bash_tool=ToolDefinitionLogicBash(
            permission_bash=BashToolPermission(value="allow", allowed_commands=["python3 scripts/save_note.py *"]),
            positive_examples=["python3 scripts/save_note.py --text 'buy milk'"]),
        mock=MockResponse(kind="stateful_callable", callable_spec="mocks:remember"),
        tool_tests=[ToolTest(name="saves-a-note", input={"text": "hello"},
                             evaluators=(EqualsEvaluator(field="saved", expected=1),))],
    )


def registry() -> AgentRegistry:
    writer = AgentDefinition(
        header=AgentHeader(agent_id="writer", name="writer", description="Counts words and keeps notes."),
        system_prompt="Count words with word-count and save what the user asks with save-note.",
        extra_tools=[word_count(), save_note()],
        capability_tests=[
            CapabilityTest(name="runs-its-tools", must_have_bash_patterns=("python3 scripts/word_count.py *",
                                                                           "python3 scripts/save_note.py *")),
            CapabilityTest(name="cannot-write-files", evaluators=(PermissionAbsentEvaluator(permission_key="write"),)),
        ],
        agent_tests=[
            # played by agents_scripts.py (the scripted model); one MockSession for both turns
            AgentTest(name="count-then-note", mock_profile="ci", turns=(
                Turn(prompt="how many words in 'to be or not'?", expected_tool_calls=("word-count",),
                     evaluators=(SubstringEvaluator(needle="4 words"),)),
                Turn(prompt="note that down", expected_tool_calls=("save-note",),
                     evaluators=(SubstringEvaluator(needle="1 note"),)),
            ), evaluators=(ToolCalledEvaluator(tool_name="save-note", with_args_subset={"text": "4 words"}),)),
        ],
    )
    reg = AgentRegistry()
    agent_id = reg.register_agent("writer", writer, ModelParameters(model_name="anthropic/claude-sonnet-4-5"))
    reg.register_template(TemplateTree(name="main", slots=[TemplateSlot(name="primary", default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="dev", template_name="main"))
    reg.register_mock_profile(MockProfile(name="ci", responses={
        "word-count": MockResponse(kind="fixed", fixed_output={"words": 4}),
    }))
    return reg
''',
    'agents_scripts.py': """\
# agents_scripts.py — what "the model" does in each agent test (oac test --invoker scripted, or a real harness).
from open_agent_compiler.testing.invokers.script import ScriptedModel, call, reply

SCRIPTS = {
    "count-then-note": ScriptedModel(turns=[
        [call("word-count", text="to be or not"), lambda view: reply(f"{view.last_output['words']} words")],
        [call("save-note", text="4 words"), lambda view: reply(f"{view.last_output['saved']} note saved")],
    ]),
}
""",
    'mocks.py': """\
# mocks.py — callable mocks. A `stateful_callable` gets the tool's input (a dict) and a MockState that lives for
# one test: `call_index` (0, 1, ...) and a `scratchpad` dict you may change.


def remember(payload: dict, state) -> dict:
    notes = state.scratchpad.setdefault("notes", [])
    notes.append(payload["text"])
    return {"saved": len(notes), "last": payload["text"]}
""",
    'tools/word_count.py': '''\
"""The real handler of `word-count`. Production runs `python3 scripts/word_count.py --text '...'` (or JSON on
stdin); tool tests call it directly."""

from pydantic import BaseModel

from open_agent_compiler import ScriptTool


class CountIn(BaseModel):
    text: str


class CountOut(BaseModel):
    words: int


class WordCount(ScriptTool[CountIn, CountOut]):
    name = "word-count"
    description = "Count the words of a text."

    def execute(self, input: CountIn) -> CountOut:  # noqa: A002 - ScriptTool's vocabulary
        return CountOut(words=len(input.text.split()))


if __name__ == "__main__":
    raise SystemExit(WordCount.run())
''',
    'pyproject.toml': """\
[tool.oac]
project = "__OAC_PROJECT__"   # the shared state's namespace: the same in every checkout, whatever its folder
factory = "agents:registry"
config = "dev"
invoker = "scripted"   # agent tests play agents_scripts.py; --invoker opencode|claude|codex|pi runs a real harness

[[tool.oac.compile]]   # `oac compile` / `doit compile`: the agent for OpenCode, into build/opencode
config = "dev"
dialect = "opencode"
target = "build/opencode"
""",
    'dodo.py': """\
# dodo.py — `doit test` runs the same task graph as `oac test`; `doit compile` the [[tool.oac.compile]] entries.
from open_agent_compiler.tasks import DOIT_CONFIG, task_compile, task_test  # noqa: F401
""",
    '.github/workflows/agents.yml': """\
# The project's tests over a GitHub Actions matrix (docs/ci.md): three shards, one merge job that writes the
# pipeline's JUnit, annotations and report, and carries the history. Each job has a PostgreSQL service container
# for the shared green state; a container lives only as long as its job, so the merge job saves every shard's
# outcomes with the history and the next pipeline's shards start from them: a key any shard proved is skipped.
# Repository setting it reads: the variable OAC_REQUIREMENT (how to install oac: a pinned requirement, a wheel URL
# or a git URL). To share greens with other machines too, point OAC_STATE_URL at a database that outlives
# pipelines (and PGPASSWORD at a secret) instead of the service's.
name: agents

on: [push, pull_request]

env:
  FACTORY: agents:registry
  CONFIG: dev
  SHARDS: "3"
  HISTORY_DAYS: "30"
  OAC_REQUIREMENT: ${{ vars.OAC_REQUIREMENT }}

jobs:
  test:
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        shard: [1, 2, 3]
    services:
      postgres:  # this job's shared state: a throwaway database, reachable from this job only
        image: postgres:16
        env:
          POSTGRES_USER: oac
          POSTGRES_DB: oac
          POSTGRES_HOST_AUTH_METHOD: trust
        ports:
          - 5432:5432
        options: >-
          --health-cmd "pg_isready -U oac" --health-interval 2s --health-timeout 5s --health-retries 30
    env:
      SHARD: ${{ matrix.shard }}
      OAC_STATE_URL: postgresql://oac@127.0.0.1:5432/oac
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install oac
        run: |
          if [ -z "$OAC_REQUIREMENT" ]; then
            echo "::error::set the repository variable OAC_REQUIREMENT to how this project installs oac"
            exit 1
          fi
          pip install "$OAC_REQUIREMENT" "psycopg[binary]>=3.1,<4"
      # every shard reads the same history (the last merge's), so --shard-by duration splits alike everywhere
      - uses: actions/cache/restore@v4
        with:
          path: history
          key: oac-history-${{ github.ref_name }}-${{ github.run_id }}-${{ github.run_attempt }}
          restore-keys: oac-history-${{ github.ref_name }}-
      - name: Run shard
        run: |
          mkdir -p results history
          touch history/all.jsonl
          cp history/all.jsonl "results/shard-$SHARD.jsonl"
          if [ -f history/state.jsonl ]; then oac state import history/state.jsonl; fi  # the last pipeline's greens
          status=0
          GITHUB_ACTIONS=false oac test "$FACTORY" --config "$CONFIG" --shard "$SHARD/$SHARDS" --shard-by duration \\
            --results "results/shard-$SHARD.jsonl" --junit "results/junit-$SHARD.xml" --require-shared-state \\
            || status=$?
          oac state export -o "results/state-$SHARD.jsonl"  # failures too: a failure cancels an older pass
          exit "$status"
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: oac-results-${{ matrix.shard }}
          path: results/

  merge:
    needs: test
    if: always()
    runs-on: ubuntu-latest
    services:
      postgres:  # this job's shared state: a throwaway database, reachable from this job only
        image: postgres:16
        env:
          POSTGRES_USER: oac
          POSTGRES_DB: oac
          POSTGRES_HOST_AUTH_METHOD: trust
        ports:
          - 5432:5432
        options: >-
          --health-cmd "pg_isready -U oac" --health-interval 2s --health-timeout 5s --health-retries 30
    env:
      OAC_STATE_URL: postgresql://oac@127.0.0.1:5432/oac
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install oac
        run: pip install "$OAC_REQUIREMENT" "psycopg[binary]>=3.1,<4"
      - name: Compiled output is current
        run: oac compile --check   # fails, listing the files, when the committed build/ is not up to date
      - uses: actions/download-artifact@v4
        with:
          pattern: oac-results-*
          path: results
          merge-multiple: true
      # the pipeline's green state: every shard's outcomes (under each key the run that finished last) of the last
      # HISTORY_DAYS days, kept with the history for the next pipeline
      - name: Merge shard state
        if: always()
        run: |
          mkdir -p history
          shopt -s nullglob
          exports=(results/state-*.jsonl)
          if [ "${#exports[@]}" -gt 0 ]; then
            oac state import "${exports[@]}"
            oac state export --since "${HISTORY_DAYS}d" -o history/state.jsonl
          fi
      # one summary, JUnit file and annotation per failing test for the whole pipeline; the history kept is the
      # last HISTORY_DAYS days
      - name: Merge shard results
        run: |
          mkdir -p history
          oac results merge results/shard-*.jsonl --since "${HISTORY_DAYS}d" -o history/all.jsonl \\
            --junit results/junit.xml
      - name: Report
        if: always()
        run: |
          oac results --results history/all.jsonl
          oac report --results history/all.jsonl -o results/report.html
      - uses: actions/cache/save@v4
        if: always()
        with:
          path: history
          key: oac-history-${{ github.ref_name }}-${{ github.run_id }}-${{ github.run_attempt }}
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: oac-pipeline
          path: |
            results/junit.xml
            results/report.html
""",
}
