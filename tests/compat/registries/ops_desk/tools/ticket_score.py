"""Real handler of the `ticket-score` tool: scores a ticket's urgency from its text (JSON in, JSON out)."""

from pydantic import BaseModel

from open_agent_compiler.model.script_tool import ScriptTool

URGENT_WORDS = ("outage", "down", "data loss", "security")


class TicketIn(BaseModel):
    text: str


class TicketScore(BaseModel):
    severity: str
    hits: list[str]


class ScoreTicket(ScriptTool[TicketIn, TicketScore]):
    name = "ticket-score"
    description = "Score a ticket's urgency."

    def execute(self, input: TicketIn) -> TicketScore:  # noqa: A002 - ScriptTool's vocabulary
        hits = [word for word in URGENT_WORDS if word in input.text.lower()]
        return TicketScore(severity="high" if hits else "low", hits=hits)


if __name__ == "__main__":
    raise SystemExit(ScoreTicket.run())
