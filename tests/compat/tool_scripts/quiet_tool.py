"""A handler without a `resources` parameter that answers from its own `mock_response` for one topic (ours)."""

from pydantic import BaseModel

from open_agent_compiler.runtime import ScriptTool


class QuietIn(BaseModel):
    topic: str
    limit: int = 2


class QuietOut(BaseModel):
    notes: list[str]
    source: str


class Quiet(ScriptTool[QuietIn, QuietOut]):
    name = "quiet"
    description = "Repeats the topic; answers 'canned' from mock_response."

    def execute(self, input: QuietIn) -> QuietOut:
        return QuietOut(notes=[input.topic] * input.limit, source="real")

    def mock_response(self, input: QuietIn) -> QuietOut | None:
        return QuietOut(notes=["canned"], source="mock_response") if input.topic == "canned" else None


if __name__ == "__main__":
    Quiet.run()
