# agents_scripts.py — what "the model" does in agents.py's agent tests under `oac test --invoker scripted`
# (found by convention: <factory module>_scripts.SCRIPTS, keyed by agent test name).
from open_agent_compiler.testing.invokers.script import ScriptedModel, call, reply

SCRIPTS = {
    "echo-conversation": ScriptedModel(turns=[
        # turn 1: call echo-tool, then answer with the `text` field it returned
        [call("echo-tool", text="hi"), lambda view: reply(view.last_output["text"])],
        # turn 2: the same session, so the model can see turn 1 in view.conversation
        [call("echo-tool", text="again"), lambda view: reply(view.last_output["text"])],
    ]),
}
