"""``eliciting_server.py``'s tools served by the SDK's FastMCP over stdio: the questions as the SDK
itself asks them (the same forms, checked at start-up, and the same answers)."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

if __name__ == "__main__":  # a script: the tests' folder is where its sibling is found
    sys.path.insert(0, str(Path(__file__).parents[1]))

from mcp_servers.eliciting_server import PASSWORD, PROFILE, TOOLS, URL, said

server = FastMCP("eliciting-server", log_level="WARNING")


class Profile(BaseModel):
    name: str = Field(description="Your name")
    language: str = Field(
        description="Favourite language", json_schema_extra={"enum": ["python", "rust", "go"]}
    )


class Password(BaseModel):
    password: str = Field(description="The database password", json_schema_extra={"format": "password"})


def _reply(result: object) -> str:
    data = getattr(result, "data", None)
    action: object = getattr(result, "action", "?")
    return said(action, data.model_dump() if isinstance(data, BaseModel) else None)


@server.tool(description=TOOLS["ask_profile"][0])
async def ask_profile(ctx: Context) -> str:  # type: ignore[type-arg]
    return _reply(await ctx.elicit(TOOLS["ask_profile"][1]["message"], schema=Profile))


@server.tool(description=TOOLS["ask_password"][0])
async def ask_password(ctx: Context) -> str:  # type: ignore[type-arg]
    return _reply(await ctx.elicit(TOOLS["ask_password"][1]["message"], schema=Password))


@server.tool(description=TOOLS["connect_account"][0])
async def connect_account(ctx: Context) -> str:  # type: ignore[type-arg]
    result = await ctx.elicit_url(*URL)
    if getattr(result, "action", None) == "accept":  # the sign-in "happened": say so
        await ctx.session.send_elicit_complete(URL[2])
    return _reply(result)


if __name__ == "__main__":
    forms = (Profile.model_json_schema(), Password.model_json_schema())
    assert forms == (PROFILE, PASSWORD), f"the hand-written forms are not FastMCP's: {forms}"
    server.run(transport="stdio")
