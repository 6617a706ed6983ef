"""What one benchmark run measures: sizes, profile shapes, repetitions, and where the anchor is capped."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

LARGE = 20_000  # from this many tests on, `large_reps` runs per measurement (`--large-reps 1` for a quick look)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000, 5_000, 50_000)
    shapes: tuple[str, ...] = ("per-agent", "shared")
    reps: int = 5
    large_reps: int = 5  # the issue asks for the median of at least 5 runs at every size
    ours_max: dict[str, int] = field(default_factory=lambda: {"per-agent": 50_000, "shared": 5_000})
    anchor_max: dict[str, int] = field(default_factory=lambda: {"per-agent": 50_000, "shared": 5_000})
    edit_size: int = 5_000
    edit_shapes: tuple[str, ...] = ("per-agent",)
    slow_tests: int = 500
    slow_ms: int = 10
    slow_kinds: tuple[str, ...] = ("sleep", "busy")
    jobs: int = 2
    profile: bool = True
    profile_largest: bool = True  # also profile our warm run at the largest per-agent size (superlinear costs)
    cold_profile_size: int = 1_000
    phase_runs: int = 3  # wall-clock step timings (phases_child.py) per timed scenario; 0: none
    flat_reps: int = 7  # warm runs per size, sizes interleaved, for the flatness target; 0: from the warm rows
    compile_size: int = 5_000  # `oac compile` of this suite's registry (1,000 agents) cold/unchanged/one edited; 0: none
    compile_dialects: tuple[str, ...] = ("opencode", "claude")
    cassette_harnesses: tuple[str, ...] = ("claude", "opencode")  # replayed vs scripted agent test (issue 35)
    cassette_reps: int = 20  # pairs per harness: a 95 % interval for their median needs 6; ±5 % needs ~20 here

    def reps_for(self, tests: int) -> int:
        return self.reps if tests < LARGE else self.large_reps

    def skipped(self, impl: str, tests: int, shape: str) -> str | None:
        """Why `impl` does not run this size/shape, or None when it does."""
        limit = (self.ours_max if impl == "ours" else self.anchor_max).get(shape, 0)
        if tests <= limit:
            return None
        why = ("the anchor hashes the whole shared MockProfile for every test (quadratic: ~100 s per run at "
               "20,000 tests)" if impl == "anchor" and shape == "shared" else "to keep the default run short")
        return f"{impl} not run at {tests:,} tests with {shape} profiles (capped at {limit:,}: {why}; --preset full raises caps)"


PRESETS: dict[str, Plan] = {
    "default": Plan(),
    "quick": Plan(sizes=(100, 1_000), reps=3, edit_size=1_000, slow_tests=100, slow_kinds=("sleep",),
                  cold_profile_size=100, flat_reps=3, compile_size=1_000, cassette_harnesses=("claude",),
                  cassette_reps=12),
    "full": Plan(sizes=(100, 1_000, 5_000, 20_000, 50_000),
                 ours_max={"per-agent": 50_000, "shared": 50_000},
                 anchor_max={"per-agent": 50_000, "shared": 20_000},
                 edit_shapes=("per-agent", "shared"), cassette_harnesses=("claude", "opencode", "codex", "pi"),
                 cassette_reps=24),
}


def preset(name: str, *, sizes: tuple[int, ...] | None = None, reps: int | None = None,
           large_reps: int | None = None) -> Plan:
    plan = PRESETS[name]
    if sizes:
        plan = replace(plan, sizes=sizes)
    if reps:
        plan = replace(plan, reps=reps, cassette_reps=reps)
    if large_reps:
        plan = replace(plan, large_reps=large_reps)
    return plan
