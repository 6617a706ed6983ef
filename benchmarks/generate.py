"""Write a synthetic `oac test` project: agents.py (the factory `agents:registry`), bench_spec.json (its shape),
bench_mocks.py (the slow callable mock) and one handler script per handler-backed tool.

The output is deterministic (no clock, no randomness), so a second run of either implementation hits its cache.

    python benchmarks/generate.py DIR --tests 5000 [--profiles shared|per-agent] [--handler-every 10]
                                      [--slow-ms 10 [--slow-kind sleep|busy]]
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

SYNTHETIC = Path(__file__).resolve().parent / "synthetic"
TESTS_PER_AGENT = 5
PROFILE_SHAPES = ("shared", "per-agent")


@dataclass(frozen=True)
class Spec:
    """The shape of a synthetic registry. `agents` × 5 tests; see synthetic/agents.py for what each test is."""

    agents: int
    profiles: str = "per-agent"
    handler_every: int = 10
    slow_ms: int = 0
    slow_kind: str = "sleep"
    mock_files_every: int = 0  # every K-th agent's tool1 mock reads mocks/<tool>.json (our watch scenario only)
    edits: dict[str, int] = field(default_factory=dict)

    @classmethod
    def for_tests(cls, tests: int, **options: object) -> "Spec":
        if tests % TESTS_PER_AGENT:
            raise ValueError(f"--tests must be a multiple of {TESTS_PER_AGENT}, got {tests}")
        return cls(agents=tests // TESTS_PER_AGENT, **options)  # type: ignore[arg-type]

    @property
    def tests(self) -> int:
        return self.agents * TESTS_PER_AGENT

    def with_edit(self, agent: int, revision: int) -> "Spec":
        return replace(self, edits={**self.edits, str(agent): revision})

    def handler_agents(self) -> list[int]:
        if self.slow_ms > 0 or not self.handler_every:
            return []
        return [i for i in range(self.agents) if i % self.handler_every == self.handler_every - 1]

    def mock_file_agents(self) -> list[int]:
        every = self.mock_files_every
        if self.slow_ms > 0 or not every:
            return []
        return [i for i in range(self.agents) if i % every == every - 1]

    def tests_of_agent(self, index: int) -> set[str]:
        """Names of every test that belongs to agent `index` (its capability tests and its tools' tests)."""
        if self.slow_ms > 0:
            return {f"a{index}-tool{j}-slow" for j in range(5)}
        first = "handler" if index in set(self.handler_agents()) else "fixed"
        return {
            f"agent-{index}-bash",
            f"agent-{index}-no-write",
            f"a{index}-tool0-{first}",
            f"a{index}-tool1-seq",
            f"a{index}-tool2-profile",
        }


def handler_path(project: Path, agent: int) -> Path:
    return project / "handlers" / f"a{agent}_tool0.py"


def mock_file_path(project: Path, agent: int) -> Path:
    return project / "mocks" / f"a{agent}-tool1.json"


def write_mock_file(project: Path, agent: int, revision: int = 0) -> None:
    """The output agent `agent`'s tool1 mock returns (`revision` changes the bytes, not what the test checks)."""
    path = mock_file_path(project, agent)
    path.write_text(json.dumps({"batch": [1, 2], "n": revision}) + "\n", encoding="utf-8")


def write_spec(project: Path, spec: Spec) -> None:
    (project / "bench_spec.json").write_text(json.dumps(asdict(spec), sort_keys=True) + "\n", encoding="utf-8")


def generate(project: Path, spec: Spec) -> Path:
    """Create (or replace) `project` with the synthetic registry described by `spec`."""
    if spec.profiles not in PROFILE_SHAPES:
        raise ValueError(f"profiles must be one of {PROFILE_SHAPES}, got {spec.profiles!r}")
    if project.exists():
        shutil.rmtree(project)
    (project / "handlers").mkdir(parents=True)
    shutil.copyfile(SYNTHETIC / "agents.py", project / "agents.py")
    shutil.copyfile(SYNTHETIC / "bench_mocks.py", project / "bench_mocks.py")
    template = (SYNTHETIC / "handler.py.template").read_text(encoding="utf-8")
    for agent in spec.handler_agents():
        handler_path(project, agent).write_text(template.format(tool_name=f"a{agent}-tool0"), encoding="utf-8")
    if spec.mock_file_agents():
        shutil.copyfile(SYNTHETIC / "bench_file_mocks.py", project / "bench_file_mocks.py")
        (project / "mocks").mkdir()
        for agent in spec.mock_file_agents():
            write_mock_file(project, agent)
    write_spec(project, spec)
    return project


def edit_handler(project: Path, agent: int, revision: int) -> Path:
    """Change the handler script of agent `agent`'s tool0 (a trailing comment: same behaviour, new contents)."""
    path = handler_path(project, agent)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"# benchmark edit {revision}\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("project", type=Path)
    parser.add_argument("--tests", type=int, default=100)
    parser.add_argument("--profiles", choices=PROFILE_SHAPES, default="per-agent")
    parser.add_argument("--handler-every", type=int, default=10, help="every K-th agent's tool0 has a real handler (0: none)")
    parser.add_argument("--slow-ms", type=int, default=0, help="slow suite: every test's mock takes this long")
    parser.add_argument("--slow-kind", choices=("sleep", "busy"), default="sleep")
    args = parser.parse_args(argv)
    spec = Spec.for_tests(args.tests, profiles=args.profiles, handler_every=args.handler_every,
                          slow_ms=args.slow_ms, slow_kind=args.slow_kind)
    generate(args.project, spec)
    print(f"wrote {spec.tests} tests ({spec.agents} agents, {len(spec.handler_agents())} handler tools) to {args.project}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
