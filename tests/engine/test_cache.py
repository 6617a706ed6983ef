"""Green-state skipping is sound: what changes a result re-runs the test; nothing stale passes."""

from engine_project import SUMMARY, Project, summary_line


def statuses(project: Project, since: int = 0) -> dict[str, str]:
    return {r["test_id"]: r["status"] for r in project.records()[since:]}


def test_cold_then_warm(project: Project) -> None:
    done = project.test()
    assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0), done.stdout
    assert sorted(project.executions()) == ["counter", "lookup"]
    done = project.test()
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 0, 4, 0)
    assert sorted(project.executions()) == ["counter", "lookup"]  # nothing executed


def test_editing_a_handler_reruns_its_test_and_it_fails(project: Project) -> None:
    project.test()
    seen = len(project.records())
    project.edit("handlers/lookup.py", "TRANSFORM = str.upper", "TRANSFORM = str.lower")
    done = project.test(code=1)
    assert summary_line(done.stdout) == SUMMARY.format(4, 0, 1, 3, 0)
    assert "  FAIL 'lookup-real': " in done.stdout and '"ABC"' in done.stdout
    assert "Failures:" in done.stdout and "tool:lookup::lookup-real" in done.stdout
    assert statuses(project, seen) == {"tool:lookup::lookup-real": "fail"}


def test_editing_a_callable_mock_module_reruns_its_test(project: Project) -> None:
    project.test()
    project.edit("mockmod.py", 'return {"n": 1}', 'return {"n": 2}')
    done = project.test(code=1)
    assert "  FAIL 'counter-mock'" in done.stdout
    assert project.executions().count("counter") == 2 and project.executions().count("lookup") == 1


def test_pass_change_fail_revert_runs_again(project: Project) -> None:
    project.test()
    project.edit("handlers/lookup.py", "TRANSFORM = str.upper", "TRANSFORM = str.lower")
    project.test(code=1)
    project.edit("handlers/lookup.py", "TRANSFORM = str.lower", "TRANSFORM = str.upper")
    seen = len(project.records())
    done = project.test()
    # the old pass under this very key is not resurrected: the test runs and passes afresh
    assert statuses(project, seen) == {"tool:lookup::lookup-real": "pass"}
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 0, 3, 0)
    assert project.executions().count("lookup") == 3


def test_failures_are_never_cached(project: Project) -> None:
    project.edit("handlers/lookup.py", "TRANSFORM = str.upper", "TRANSFORM = str.lower")
    project.test(code=1)
    project.test(code=1)
    assert project.executions().count("lookup") == 2


def test_same_name_capability_tests_on_different_slots_are_independent(project: Project) -> None:
    project.test()
    seen = len(project.records())
    # change only beta's tool pattern: alpha's same-named capability test stays green
    project.edit("agents.py", 'bash("python counter.py")', 'bash("python counter.py --fast")')
    done = project.test(code=1)
    # the counter tool's own definition changed too, so its test re-runs; alpha's tests do not
    assert statuses(project, seen) == {"capability:helper::same-name": "fail", "tool:counter::counter-mock": "pass"}
    assert summary_line(done.stdout) == SUMMARY.format(4, 1, 1, 2, 0)


def test_editing_one_agent_leaves_the_other_agents_tests_green(project: Project) -> None:
    project.test()
    seen = len(project.records())
    project.edit("agents.py", 'system_prompt="BETA_PROMPT"', 'system_prompt="BETA_PROMPT_V2"')
    project.test()
    assert set(statuses(project, seen)) == {"capability:helper::same-name"}


def test_explain_names_what_changed(project: Project) -> None:
    project.test()
    passed_at = next(r["timestamp"] for r in project.records() if r["test_name"] == "lookup-real")
    project.edit("mockmod.py", 'return {"n": 1}', 'return {"n": 1}  # same result, new file')
    done = project.test("--explain")
    assert "  run 'counter-mock': changed: file mockmod.py" in done.stdout
    assert f"  skip 'lookup-real': matches green run from {passed_at} [tool]" in done.stdout  # its pass's time
    fresh = project.test("--explain", "--force")
    assert "  run 'lookup-real': --force" in fresh.stdout


def test_explain_under_two_processes(project: Project) -> None:
    """A `-n` worker tells the main process a test started only when its line is printed (`--explain`)."""
    done = project.test("--explain", "--kind", "tool", "-n", "2")
    assert "  run 'lookup-real': never ran" in done.stdout
    assert "  run 'counter-mock': never ran" in done.stdout


def test_explain_says_never_ran_and_last_run_failed(project: Project) -> None:
    done = project.test("--explain", "--kind", "tool")
    assert "  run 'lookup-real': never ran" in done.stdout
    project.edit("handlers/lookup.py", "TRANSFORM = str.upper", "TRANSFORM = str.lower")
    project.test("--kind", "tool", code=1)
    done = project.test("--explain", "--kind", "tool", code=1)
    assert "  run 'lookup-real': last run failed" in done.stdout


def test_variant_is_part_of_the_key(project: Project) -> None:
    project.test()
    done = project.test("--variant", "b")
    assert summary_line(done.stdout) == SUMMARY.format(4, 4, 0, 0, 0)
    assert {r["variant"] for r in project.records()[-4:]} == {"b"}


def test_dialect_is_part_of_capability_keys_only(project: Project) -> None:
    project.test()
    done = project.test("--dialect", "claude")
    # capability tests re-run against the claude artifact; tool tests do not depend on the dialect
    assert summary_line(done.stdout) == SUMMARY.format(4, 2, 0, 2, 0)
