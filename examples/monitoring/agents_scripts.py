# agents_scripts.py — the model for agents.py's tests, as one function of what it sees (ModelView):
# first check health; on an alert page on-call; then answer from what the tools returned.
from open_agent_compiler.testing.invokers.script import ModelView, call, reply


def monitor(view: ModelView):
    if view.step == 0:
        return call("check-health", service="api")
    status = view.tool_results[0].output["status"]
    if status == "alert" and len(view.tool_results) == 1:
        return call("page-oncall", service="api", reason=f"{view.last_output['errors']} errors")
    return reply("paged on-call" if status == "alert" else "all quiet")


SCRIPTS = {"quiet-alert-quiet": monitor}
