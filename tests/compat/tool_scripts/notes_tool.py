"""A resource-bound tool handler in the public package's documented style (ours): it reads notes from the
`notes` sqlite resource its access profile binds, and says so when nothing is bound."""

from pydantic import BaseModel, Field

from open_agent_compiler.runtime import ResourceHandle, ScriptTool


class NotesIn(BaseModel):
    topic: str = Field(description="what the notes are about")
    limit: int = 3


class NotesOut(BaseModel):
    notes: list[str]
    source: str


class NotesTool(ScriptTool[NotesIn, NotesOut]):
    name = "notes"
    description = "Reads notes on a topic."

    def execute(self, input: NotesIn, resources: dict[str, ResourceHandle] | None = None) -> NotesOut:
        handle = (resources or {}).get("notes")
        if handle is None:
            return NotesOut(notes=[], source="not bound")
        if handle.mock_only:
            return NotesOut(notes=[f"mock-only {handle.kind}"], source=handle.name)
        with handle.sqlite_connect() as db:
            rows = db.execute("select body from notes where topic = ? order by id limit ?",
                              (input.topic, input.limit)).fetchall()
        return NotesOut(notes=[body for (body,) in rows], source=handle.name)


def canned(input: NotesIn) -> NotesOut:
    return NotesOut(notes=[f"callable saw {type(input).__name__} {input.topic}"], source="callable")


if __name__ == "__main__":
    NotesTool.run()
