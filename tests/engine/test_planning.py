"""The planning pipeline's steps, each on its own, and the file checker doit uses for test tasks."""

from pathlib import Path

import pytest

from engine_project import Project
from open_agent_compiler.model.hashing import digest_bytes
from open_agent_compiler.tasks import build_options, planning
from open_agent_compiler.tasks.file_checker import OacFileChecker


def test_each_step_alone(quickstart: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(quickstart.root)
    options = build_options(quickstart.root, {"factory": "agents:registry", "config": "prod"})
    resolved = planning.load(options)
    cases = planning.discover_tests(resolved, options)
    assert [case.kind for case in cases].count("tool") == 2 and len(cases) == 5
    skipped = planning.compile_dialect(resolved, options, needed=False)
    assert skipped.contents == {} and skipped.artifact_paths == {}
    compiled = planning.compile_dialect(resolved, options, needed=True)
    assert compiled.artifacts("primary") == {".opencode/agents/primary.md": compiled.contents[".opencode/agents/primary.md"]}
    keyer = planning.Keyer(resolved, cases, compiled, options, discovered={})
    cache = options.state_dir / "key-cache" / "opencode.json"
    keys = planning.test_keys(cases, resolved, compiled, options, keyer, cache)
    assert keys == {case.test_id: keyer.parts_of(case.test_id).key() for case in cases}
    assert cache.is_file()  # written at the step's edge
    # the digest memos are let go once every test is keyed (cold peak RSS); keyed again, the same keys
    from open_agent_compiler.keys import key as keys_module

    assert not keys_module._TOOL_DIGESTS and not keys_module._MODEL_DIGESTS
    for case in cases:
        keyer.forget_parts(case.test_id)
        assert keyer.parts_of(case.test_id).key() == keys[case.test_id]
    # a discovered dependency changes exactly that test's key
    (quickstart.root / "helper.py").write_text("X = 1\n")
    with_dep = planning.Keyer(resolved, cases, compiled, options,
                              discovered={"tool:echo-tool::echo-default-mock": [str(quickstart.root / "helper.py")]})
    changed = {c.test_id for c in cases if with_dep.parts_of(c.test_id).key() != keys[c.test_id]}
    assert changed == {"tool:echo-tool::echo-default-mock"}
    assert with_dep.parts_of("tool:echo-tool::echo-default-mock").files == {"helper.py": digest_bytes(b"X = 1\n")}


def test_file_checker_reads_each_file_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "handler.py"
    path.write_text("print(1)\n")
    checker = OacFileChecker()
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: opened.append(p) or real_open(p, *a, **k))
    state = checker.get_state(str(path), None)
    assert state == digest_bytes(b"print(1)\n")
    for _ in range(100):  # 100 tasks listing the same file
        assert not checker.check_modified(str(path), checker.info(str(path)), state)
    assert opened == [str(path)]
    assert checker.check_modified(str(path), None, "another digest")
    assert checker.get_state(str(path), state) is None  # unchanged: nothing to save
    with pytest.raises(FileNotFoundError):
        OacFileChecker().get_state(str(tmp_path / "gone.py"), None)
