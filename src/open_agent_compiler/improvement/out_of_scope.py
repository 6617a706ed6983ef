"""The names of 1.16.5's improvement loop (`IterativeLoop`, mutators, runners, fleets, ...) import from
`open_agent_compiler.improvement`, so a registry module that also holds its loop script loads; using one (calling,
instantiating) raises `OutOfScopeError` with one line saying oac does not run the loop."""

from typing import Any, NoReturn

from open_agent_compiler.errors import OacError

# The loop's public names in 1.16.5's `open_agent_compiler.improvement` that oac does not provide.
LOOP_NAMES: frozenset[str] = frozenset({
    "BranchInvokerFactory", "ChoiceFieldMutator", "ClaudeCodeRunner", "CodexRunner", "ComponentKind",
    "ComponentRegistry", "ComponentVersion", "ContractPredicate", "ContractResult", "Evaluator", "EvaluatorFactory",
    "ExecutableFactory", "FleetResult", "HarnessResult", "HarnessRunner", "IdentityMutator",
    "ImprovementAgentMutator", "ImprovementUnit", "Invoker", "IterativeLoop", "LLMMutatorClient", "LLMPromptRewriter",
    "LLMWorkflowEditor", "LoopResult", "MutationContext", "Mutator", "NumericFieldMutator",
    "OpenAICompatMutatorClient", "OpencodeEventTap", "OpencodeMutatorClient", "OpencodeRunResult", "OpencodeRunner",
    "OptimizationTarget", "PerClassResult", "PerTargetResult", "PiRunner", "Probe", "ProbeCache", "ProbeExecutable",
    "ProbeOutcome", "ProbeResult", "ProbeRunResult", "ProbeSynthesizer", "PromptPrefixMutator",
    "PromptSuffixMutator", "RegistryFactory", "RoundResult", "RunOutcome", "RunStore", "Snapshot",
    "SourceApplyError", "SpecFactory", "SqliteRunStore", "StreamedEvent", "StreamingOpencodeRun",
    "SubprocessHarnessResult", "TeacherGapRewriter", "TemperatureMutator", "ToolAttachMutator",
    "ToolDescriptionAppendMutator", "ToolDetachMutator", "ToolFormatMutator", "ToolRuleAddMutator", "UnitOutcome",
    "WorkflowStepAppendMutator", "WorkflowStepRemoveMutator", "aggregate_score", "autoresearch", "build_branch_loop",
    "build_outcome_branch_loop", "optimize_callable", "run_fleet", "run_per_class_loops", "run_per_target_loops",
    "run_probe", "run_probes", "split_loop", "target_loop", "write_round_winners", "write_snapshot",
})


class OutOfScopeError(OacError):
    """A part of 1.16.5's improvement loop was used; oac does not run the loop."""


def _refuse(name: str) -> NoReturn:
    raise OutOfScopeError(f"{name} is part of open-agent-compiler 1.16.5's improvement loop, which oac does not run "
                          "(out of scope: docs/compatibility.md); the criteria types import, the loop does not run")


class _Refusing(type):
    """The metaclass of a loop name: the class and its subclasses import and can be named, never instantiated."""

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse(next(k.__name__ for k in cls.__mro__ if isinstance(k, _Refusing) and k.__name__ in LOOP_NAMES))


def loop_name(name: str) -> type:
    """A stand-in for loop name `name`: calling it, or instantiating a subclass of it, raises `OutOfScopeError`."""
    return _Refusing(name, (), {"__module__": "open_agent_compiler.improvement", "__doc__": __doc__})
