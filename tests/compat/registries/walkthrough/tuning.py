"""Step 8 — a registry that declares what the improvement loop should optimise (as 1.16.5's examples 20 and 25
do: `OptimisationCriterion` from the top level, `Criterion` from `open_agent_compiler.improvement`, a
`SplitProfile` per model class). The registry imports, compiles and tests the same; the loop itself is out of
scope here, and `improve()` says so when it is run.

    oac test tuning:registry --config default
"""

from open_agent_compiler import (
    AgentDefinition, AgentHeader, AgentRegistry, CompilationConfig, ModelParameters, ModelPreset,
    OptimisationCriterion, SamplingDefaults, SplitProfile, TemplateSlot, TemplateTree,
)
from open_agent_compiler.improvement import Criterion
from open_agent_compiler.model.core.test_model import CapabilityTest


def registry() -> AgentRegistry:
    reg = AgentRegistry()
    tutor = AgentDefinition(
        header=AgentHeader(agent_id="tutor", name="tutor", description="Explains a concept in a few sentences."),
        usage_explanation_long="Answers a question about software with its trade-offs.",
        usage_explanation_short="tutor", system_prompt="Explain briefly, naming one trade-off.", model_class="fast",
        capability_tests=[CapabilityTest(name="tutor-never-writes", must_not_have_tools=("write", "edit"))],
    )
    agent_id = reg.register_agent("tutor", tutor, ModelParameters(model_name="anthropic/claude-haiku-4-5",
                                                                  temperature=0.3))
    reg.register_template(TemplateTree(name="tutoring", slots=[TemplateSlot(name="primary",
                                                                            default_agent_id=agent_id)]))
    reg.create_compilation_config(CompilationConfig(name="default", template_name="tutoring"))
    return reg


GOAL = OptimisationCriterion(
    name="fuller-answers", aggregation="weighted",
    criteria=(Criterion.for_named("answer-length", "score_floor", target=1.0, weight=2.0),
              Criterion(name="all-pass", kind="pass_rate", target=0.9)),
)

PER_CLASS = SplitProfile(
    name="per-class", postfix="-per-class",
    preset=ModelPreset(name="base", provider="anthropic", model_id="claude-haiku-4-5",
                       sampling=SamplingDefaults(temperature=0.3)),
    class_map={"fast": ModelPreset(name="quick", provider="anthropic", model_id="claude-haiku-4-5"),
               "deep": ModelPreset(name="careful", provider="anthropic", model_id="claude-sonnet-4-5")},
    default_class="fast",
)


def improve() -> object:
    """What a loop script of 1.16.5 does first: build the loop (oac refuses here, naming the loop)."""
    from open_agent_compiler.improvement import IterativeLoop, PromptPrefixMutator

    return IterativeLoop(baseline=None, mutators=[PromptPrefixMutator("Name the trade-offs.")], criterion=GOAL,
                         evaluator=lambda version: {}, max_rounds=1)
