"""The capability read-back is memoised (issue 18): once per artifact, keyed by the digest of its bytes, and each
question's decision once per artifact. A memo must never answer for other bytes than the ones it read, and must
decide exactly as the read-back without any index or memo would."""

from hypothesis import given, settings
from hypothesis import strategies as st

from open_agent_compiler.compiler.bash_match import js_key_order, opencode_match
from open_agent_compiler.compiler.frontmatter import render_markdown
from open_agent_compiler.compiler.opencode import OPENCODE, UNNAMED
from open_agent_compiler.model.core.capabilities import Capabilities
from open_agent_compiler.model.core.agent import AgentDefinition, AgentHeader
from open_agent_compiler.model.core.template import CompilationConfig, TemplateSlot, TemplateTree
from open_agent_compiler.model.core.test_model import CapabilityTest
from open_agent_compiler.model.registry import AgentRegistry
from open_agent_compiler.testing.discovery import discover
from open_agent_compiler.testing.permissions import bash_action, permission_action
from open_agent_compiler.testing.readback import read_back
from open_agent_compiler.testing.runner import RunSettings, run_case

PATH = OPENCODE.agent_path("a")


def artifact(permission: dict) -> dict[str, bytes]:
    return {PATH: render_markdown({"description": "x", "mode": "primary", "permission": permission}, "Work.\n")}


def test_an_edited_artifact_is_read_back_again_between_two_questions() -> None:
    before = artifact({"*": "deny", "bash": {"*": "deny", "git status": "allow"}, "edit": "allow"})
    first = read_back("opencode", "a", before)
    assert first.decide(bash_action, "git status")[0] == "allow"
    assert first.decide(permission_action, "edit")[0] == "allow"
    after = artifact({"*": "deny", "bash": {"*": "deny", "git status": "deny"}, "edit": "deny"})
    second = read_back("opencode", "a", after)
    assert second.decide(bash_action, "git status")[0] == "deny"
    assert second.decide(permission_action, "edit")[0] == "deny"
    assert read_back("opencode", "a", before) is first  # the same bytes: the same read-back, memo and all
    assert first.decide(bash_action, "git status")[0] == "allow"


def test_a_capability_test_judges_the_bytes_it_is_given_each_time(tmp_path) -> None:  # type: ignore[no-untyped-def]
    test = CapabilityTest(name="t", must_have_bash_patterns=("git status",), must_have_permissions=("edit",))
    agent = AgentDefinition(header=AgentHeader(agent_id="a", name="a", description="An agent."),
                            system_prompt="Work.", capability_tests=[test])
    reg = AgentRegistry()
    reg.register_agent("a", agent)
    reg.register_template(TemplateTree(name="t", slots=[TemplateSlot(name="a", default_agent_id="a")]))
    reg.create_compilation_config(CompilationConfig(name="c", template_name="t"))
    resolved = reg.resolve_config("c")
    (case,) = [case for case in discover(resolved) if case.kind == "capability"]
    run = RunSettings(project_root=tmp_path, build_dir=tmp_path / "build", dialect="opencode")
    allowed = artifact({"*": "deny", "bash": {"*": "deny", "git status": "allow"}, "edit": "allow"})
    denied = artifact({"*": "deny", "bash": {"*": "deny", "git status": "allow"}, "edit": "deny"})
    for files, status in ((allowed, "pass"), (denied, "fail"), (allowed, "pass")):
        assert run_case(case, resolved, run, (PATH,), artifacts=files).status == status


# the read-back without index or memo: OpenCode's evaluation replayed over every rule -------------------------
def rule_list(permission: dict) -> list[tuple[str, str, str]]:
    rules = [("*", "*", "allow")]
    for key in js_key_order(permission):
        value = permission[key]
        patterns = value if isinstance(value, dict) else {"*": value}
        rules += [(key, pattern, patterns[pattern]) for pattern in js_key_order(patterns)]
    return rules


def applicable(rules: list, permission: str) -> list[tuple[str, str]]:
    return [(pattern, action) for key, pattern, action in rules if opencode_match(permission, key)]


def last(found: list, pattern: str) -> str:
    return next((action for rule, action in reversed(found) if opencode_match(pattern, rule)), "ask")


def in_order(found: list) -> dict[str, str]:
    ordered: dict[str, str] = {}
    for pattern, action in found:
        ordered.pop(pattern, None)
        ordered[pattern] = action
    return ordered


def overall(rules: list, permission: str) -> str:
    found = applicable(rules, permission)
    if any(last(found, pattern) == "allow" for pattern in in_order(found) if pattern != "*"):
        return "allow"
    return last(found, UNNAMED)


def allowed_names(rules: list, permission: str) -> tuple[str, ...]:
    found = applicable(rules, permission)
    return tuple(name for name in in_order(found) if name != "*" and last(found, name) == "allow")


def reference(permission: dict) -> Capabilities:
    rules = rule_list(permission)
    keys = dict.fromkeys(key for key, _, _ in rules if key != "*")
    servers = [key[:-2] for key in keys if key.endswith("_*") and len(key) > 2]
    narrowed = {key for key in keys for server in servers if key.startswith(f"{server}_") and key != f"{server}_*"}
    permissions = {key: overall(rules, key) for key in keys
                   if key not in servers and not key.endswith("_*") and key not in narrowed}
    permissions.update({key: overall(rules, key) for key in ("read", "edit", "task", "skill", "webfetch",
                                                             "websearch")})
    permissions["write"] = permissions["edit"]
    permissions["*"] = last(applicable(rules, UNNAMED), "*")
    mcp = [server for server in servers if last(applicable(rules, f"{server}_{UNNAMED}"), "*") == "allow"
           or any(last(applicable(rules, key), "*") == "allow" for key in narrowed if key.startswith(f"{server}_"))]
    if last(applicable(rules, f"{UNNAMED}_{UNNAMED}"), "*") == "allow":
        mcp.append("*")
    permissions["mcp"] = "allow" if mcp else "deny"
    return Capabilities(agent="a", dialect="opencode", bash=in_order(applicable(rules, "bash")),
                        permissions=permissions, skills=allowed_names(rules, "skill"),
                        subagents=allowed_names(rules, "task"), mcp_servers=tuple(mcp))


ACTIONS = st.sampled_from(["allow", "ask", "deny"])
KEYS = st.sampled_from(["*", "bash", "read", "edit", "write", "task", "skill", "webfetch", "notes_*", "notes_get",
                        "bash_*", "b*", "re?d", "0", "7", "other"])
PATTERNS = st.sampled_from(["*", "git *", "git status", "reviewer", "notes", "*.env", "x"])
VALUES = st.one_of(ACTIONS, st.dictionaries(PATTERNS, ACTIONS, min_size=1, max_size=4))
PERMISSIONS = st.dictionaries(KEYS, VALUES, max_size=8)
QUESTIONS = st.lists(st.tuples(st.sampled_from(["bash", "permission"]),
                               st.sampled_from(["git status", "git push", "ls", "read", "edit", "mcp", "bash"])),
                     max_size=6)


@settings(max_examples=400, deadline=None)
@given(blocks=st.lists(PERMISSIONS, min_size=1, max_size=4), questions=QUESTIONS)
def test_memoised_decisions_agree_with_the_unmemoised_read_back(blocks: list, questions: list) -> None:
    """Several rule sets in a row (so the memos are shared between them, as between the agents of one run), each
    read back twice: every Capabilities (order included) and every answer is the reference's."""
    for permission in blocks * 2:
        read = read_back("opencode", "a", artifact(permission))
        expected = reference(permission)
        assert read.capabilities.model_dump() == expected.model_dump()
        assert list(read.capabilities.permissions) == list(expected.permissions)
        assert list(read.capabilities.bash) == list(expected.bash)
        for kind, item in questions:
            lookup = bash_action if kind == "bash" else permission_action
            assert read.decide(lookup, item) == lookup(expected, item)



def test_the_memo_keeps_the_most_recently_used_and_reads_an_evicted_artifact_back_the_same() -> None:
    from open_agent_compiler.testing import readback

    arts = [artifact({"*": "deny", "bash": {"*": "deny", f"tool-{i}": "allow"}}) for i in range(readback._LIMIT + 1)]
    first = read_back("opencode", "a", arts[0])
    for art in arts[1:-1]:
        read_back("opencode", "a", art)
    assert read_back("opencode", "a", arts[0]) is first  # used again: now the most recent
    read_back("opencode", "a", arts[-1])  # one more: the least recently used (arts[1]) goes, not arts[0]
    assert len(readback._READ_BACKS) <= readback._LIMIT
    assert read_back("opencode", "a", arts[0]) is first
    again = read_back("opencode", "a", arts[1])  # evicted: parsed anew, the same answers
    assert again.capabilities == readback.ReadBack(OPENCODE.capabilities("a", arts[1])).capabilities
    assert again.decide(bash_action, "tool-1")[0] == "allow" and again.decide(bash_action, "tool-2")[0] == "deny"


def test_each_test_gets_its_own_copy_of_the_read_back_as_json() -> None:
    read = read_back("opencode", "a", artifact({"*": "deny", "bash": {"*": "deny", "git status": "allow"}}))
    first = read.target()
    assert first == read.capabilities.model_dump(mode="json")
    first["bash"]["git status"] = "deny"  # a user's evaluator changes what it was given
    first["tools"].append("x")
    first["agent"] = "other"
    assert read.target() == read.capabilities.model_dump(mode="json")
