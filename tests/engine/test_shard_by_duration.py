"""`--shard K/N --shard-by duration` end to end: real `oac test` runs, three "machines" (copies of one project)
that read the same history, as a CI matrix restoring the merged results does. Agent tests of known lengths (the
invoker sleeps as long as the prompt says: what is measured is the test, not a synchronisation) are balanced by
their recorded durations; every test runs exactly once over the shards; and each shard runs exactly the tests its
partition, computed before anything ran, gave it (none moves while its own records are written)."""

import json
import shutil
from pathlib import Path

from engine_project import Project

from open_agent_compiler.testing.selection import recorded_durations, shard_of

SLEEPS = (0.30, 0.25, 0.20, 0.15, 0.10, 0.05)
AGENTS = f'''
from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, AgentTest, CompilationConfig, EqualsEvaluator, MockResponse,
    SubstringEvaluator, TemplateSlot, TemplateTree, ToolDefinition, ToolDefinitionHeader, ToolTest,
)


def registry():
    reg = AgentRegistry()
    slots = []
    for index, seconds in enumerate({SLEEPS!r}):
        tool = ToolDefinition(header=ToolDefinitionHeader(name=f"t{{index}}", description="d"),
                              mock=MockResponse(kind="fixed", fixed_output={{"ok": True}}),
                              tool_tests=[ToolTest(name=f"t{{index}}-ok", input={{}},
                                                   evaluators=(EqualsEvaluator(field="ok", expected=True),))])
        agent = AgentDefinition(header=AgentHeader(agent_id=f"a{{index}}", name=f"a{{index}}", description="d"),
                                extra_tools=[tool],
                                agent_tests=[AgentTest(name=f"a{{index}}-slow", prompt=f"sleep {{seconds}}",
                                                       evaluators=(SubstringEvaluator(needle="ok"),))])
        reg.register_agent(f"a{{index}}", agent)
        slots.append(TemplateSlot(name=f"s{{index}}", default_agent_id=f"a{{index}}"))
    reg.register_template(TemplateTree(name="tpl", slots=slots))
    reg.create_compilation_config(CompilationConfig(name="prod", template_name="tpl"))
    return reg
'''
SLEEPER = '''
import time
from contextlib import contextmanager

from open_agent_compiler.testing.invokers.protocol import InvokerInfo, TurnResult


class Turns:
    def turn(self, index, prompt):
        time.sleep(float(prompt.split()[1]))  # the agent test's own length, from its prompt
        return TurnResult(text="ok")


class Sleeper:
    info = InvokerInfo(name="sleeper")

    @contextmanager
    def session(self, agent, test, dispatcher, deadline):
        yield Turns()


def make():
    return Sleeper()
'''
RUN = ("test", "agents:registry", "--config", "prod", "--invoker", "sleeper:make")


def listed(proj: Project, *args: str) -> list[str]:
    done = proj.oac(*RUN, "--list", "--format", "json", *args, check_code=0)
    return [entry["id"] for entry in json.loads(done.stdout)]


def test_duration_shards_are_balanced_cover_every_test_once_and_hold_still_within_a_run(tmp_path: Path) -> None:
    base = Project.of(tmp_path / "base", {"agents.py": AGENTS, "sleeper.py": SLEEPER})
    (base.root / ".git").mkdir()
    base.oac(*RUN, check_code=0)  # the history: every agent test's duration recorded
    every = listed(base)
    history = base.records()
    durations = recorded_durations(history, "prod")
    agent_ids = [test_id for test_id in every if test_id.startswith("agent:")]
    assert sorted(durations) == sorted(agent_ids) and len(agent_ids) == len(SLEEPS)
    expected = shard_of(every, 3, durations)
    ran: dict[int, list[str]] = {}
    for k in (1, 2, 3):  # one machine per shard, each starting from the same restored .oac (history and state)
        machine = Project(tmp_path / f"machine{k}")
        shutil.copytree(base.root, machine.root)
        planned = listed(machine, "--shard", f"{k}/3", "--shard-by", "duration")
        assert planned == [test_id for test_id in every if expected[test_id] == k]
        before = len(machine.records())
        machine.oac(*RUN, "--shard", f"{k}/3", "--shard-by", "duration", "--force", check_code=0)
        mine = [record for record in machine.records()[before:]]
        assert len({record["run_id"] for record in mine}) == 1  # one run
        ran[k] = [record["test_id"] for record in mine]
        # the run's own records changed the history, not the shard it ran: exactly the tests planned before it
        assert sorted(ran[k]) == sorted(planned)
    assert sorted(test_id for k in ran for test_id in ran[k]) == sorted(every)  # each test once over the shards
    # balanced by the recorded durations: two agent tests per shard, loads within the longest test of each other
    loads = [sum(durations[test_id] for test_id in ran[k] if test_id in durations) for k in (1, 2, 3)]
    assert [sum(test_id in durations for test_id in ran[k]) for k in (1, 2, 3)] == [2, 2, 2]
    assert max(loads) - min(loads) <= max(durations.values())
    assert max(loads) < sum(durations.values()) / 2  # the three heaviest never share a shard
