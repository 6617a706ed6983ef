"""`oac test --invoker scripted` end to end on the example projects (the real CLI in a subprocess)."""

from agent_project import SUMMARY, summary

WRONG_TURN_TWO = '''
from open_agent_compiler.testing.invokers.script import ScriptedModel, call, reply
SCRIPTS = {"echo-conversation": ScriptedModel(turns=[[call("echo-tool", text="hi"), reply("CI-MOCK")],
                                                     [reply("answered without calling")]])}
'''

FOREIGN_TOOL = '''
from open_agent_compiler.testing.invokers.script import ScriptedModel, call, reply
SCRIPTS = {"echo-conversation": ScriptedModel(turns=[[call("echo-tool", text="hi"), reply("CI-MOCK")],
                                                     [call("rm-rf", path="/"), reply("done")]])}
'''


def test_quickstart_runs_its_agent_test_with_the_scripted_invoker(example) -> None:
    project = example("quickstart")
    done = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "scripted")
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary(done.stdout) == SUMMARY.format(5, 5, 0, 0, 0)
    agent = [r for r in project.records() if r["test_kind"] == "agent"][0]
    assert agent["status"] == "pass" and agent["invoker"].startswith("scripted ")
    names = [e["name"] for e in agent["evidence"]]
    assert names == ["turn 1: expected_tool_calls", "turn 1: substring", "turn 2: expected_tool_calls"]


def test_without_an_invoker_the_agent_test_stays_not_runnable(example) -> None:
    project = example("quickstart")
    done = project.oac("test", "agents:registry", "--config", "prod")
    assert summary(done.stdout) == SUMMARY.format(5, 4, 0, 0, 1)
    assert "no invoker wired: agent tests need one to run" in done.stdout + str(project.records())


def test_a_missing_call_fails_naming_the_turn_and_the_call(example) -> None:
    project = example("quickstart")
    project.write("wrong_scripts.py", WRONG_TURN_TWO)
    project.write("pyproject.toml", '[tool.oac]\ninvoker_script = "wrong_scripts:SCRIPTS"\n')
    done = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "scripted")
    assert done.returncode == 1
    assert summary(done.stdout) == SUMMARY.format(5, 4, 1, 0, 0)
    assert "turn 2: expected_tool_calls: expected call 'echo-tool' was not made" in done.stdout


def test_a_script_calling_a_tool_the_agent_cannot_call_fails_naming_the_turn(example) -> None:
    project = example("quickstart")
    project.write("foreign_scripts.py", FOREIGN_TOOL)
    project.write("pyproject.toml", '[tool.oac]\ninvoker_script = "foreign_scripts:SCRIPTS"\n')
    done = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "scripted")
    assert done.returncode == 1
    assert "turn 2: script calls tool 'rm-rf', which agent 'primary' cannot call (it can: echo-tool)" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_three_turn_sequenced_monitoring_scenario_passes(example) -> None:
    project = example("monitoring")
    done = project.oac("test", "-v")  # factory, config and invoker come from [tool.oac]
    assert done.returncode == 0, done.stdout + done.stderr
    assert summary(done.stdout) == SUMMARY.format(1, 1, 0, 0, 0)
    evidence = {e["name"]: e for e in project.records()[-1]["evidence"]}
    assert "check-health → page-oncall" in evidence["turn 2: expected_tool_calls"]["evidence"]
    turns = project.records()[-1]["turns"]  # each turn's tool calls, for `oac report`
    assert len(turns) == 3 and turns[1][-2:] == ["check-health", "page-oncall"]


def test_green_agent_test_is_skipped_until_its_script_or_invoker_changes(example) -> None:
    project = example("monitoring")
    assert project.oac("test").returncode == 0
    again = project.oac("test")
    assert summary(again.stdout) == SUMMARY.format(1, 0, 0, 1, 0)
    script = project.root / "agents_scripts.py"
    script.write_text(script.read_text() + "\n# edited\n")
    edited = project.oac("test", "--explain")
    assert summary(edited.stdout) == SUMMARY.format(1, 1, 0, 0, 0), edited.stdout
    assert "invoker" in edited.stdout
    first, last = project.records()[0], project.records()[-1]
    assert first["invoker"] != last["invoker"] and first["composite_hash"] != last["composite_hash"]


def test_bad_invoker_input_is_one_line_and_exit_2(example) -> None:
    project = example("quickstart")
    for args, culprit in (
        (("--invoker", "nonsense"), "unknown invoker 'nonsense'"),
        (("--invoker", "nomodule:make"), "no module 'nomodule' importable from"),
    ):
        done = project.oac("test", "agents:registry", "--config", "prod", *args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and culprit in done.stderr and "Traceback" not in done.stderr
    (project.root / "agents_scripts.py").unlink()
    done = project.oac("test", "agents:registry", "--config", "prod", "--invoker", "scripted")
    assert done.returncode == 2 and "no model script" in done.stderr and done.stderr.count("\n") == 1


JUDGED_AGENTS = '''
from open_agent_compiler import (AgentDefinition, AgentHeader, AgentRegistry, AgentTest, CompilationConfig,
                                 LLMJudgeEvaluator, TemplateSlot, TemplateTree)


def registry():
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="d"), system_prompt="Be polite.",
                            agent_tests=[AgentTest(name="polite", prompt="hello",
                                                   evaluators=(LLMJudgeEvaluator(criteria="polite"),))])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="primary", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    return reg
'''

JUDGED_SCRIPTS = '''
from open_agent_compiler.testing.invokers.script import reply
SCRIPTS = {"polite": [[reply("thank you kindly")]]}
'''

JUDGES = '''
from open_agent_compiler.testing.judges import StubJudge


def stub():
    return StubJudge(default={"pass": False, "score": 0.0, "reasoning": "not polite"},
                     rules=[("kindly", {"pass": True, "score": 0.9, "reasoning": "polite"})])


class Broken:
    def judge(self, *, criteria, target, model=None):
        raise ConnectionError("judge endpoint down")


def broken():
    return Broken()
'''


def test_llm_judge_in_an_agent_test_passes_fails_or_skips_by_the_judge_wired(tmp_path) -> None:
    from agent_project import Project
    project = Project(tmp_path)
    project.write("agents.py", JUDGED_AGENTS)
    project.write("agents_scripts.py", JUDGED_SCRIPTS)
    project.write("judges.py", JUDGES)
    base = ("test", "agents:registry", "--config", "c", "--invoker", "scripted", "--force")
    no_judge = project.oac(*base)
    assert summary(no_judge.stdout) == SUMMARY.format(1, 0, 0, 1, 0), no_judge.stdout
    assert project.records()[-1]["status"] == "skipped" and "no judge wired" in project.records()[-1]["skip_reason"]
    judged = project.oac(*base, "--judge", "judges:stub")
    assert summary(judged.stdout) == SUMMARY.format(1, 1, 0, 0, 0), judged.stdout
    assert "polite" in project.records()[-1]["evidence"][0]["evidence"]
    broken = project.oac(*base, "--judge", "judges:broken")
    assert summary(broken.stdout) == SUMMARY.format(1, 0, 1, 0, 0)
    assert "judge raised ConnectionError: judge endpoint down" in broken.stdout
    bad = project.oac(*base, "--judge", "judges:missing")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "has no attribute 'missing'" in bad.stderr


def test_changing_the_judge_reruns_tests_it_judges(tmp_path) -> None:
    from agent_project import Project
    project = Project(tmp_path)
    project.write("agents.py", JUDGED_AGENTS)
    project.write("agents_scripts.py", JUDGED_SCRIPTS)
    project.write("judges.py", JUDGES + "\n\ndef lenient():\n    return StubJudge()\n")
    base = ("test", "agents:registry", "--config", "c", "--invoker", "scripted", "--explain")
    assert summary(project.oac(*base, "--judge", "judges:stub").stdout) == SUMMARY.format(1, 1, 0, 0, 0)
    assert summary(project.oac(*base, "--judge", "judges:stub").stdout) == SUMMARY.format(1, 0, 0, 1, 0)
    other = project.oac(*base, "--judge", "judges:lenient")
    assert summary(other.stdout) == SUMMARY.format(1, 1, 0, 0, 0) and "changed: judge" in other.stdout
