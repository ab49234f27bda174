"""An MCP server (the SDK's FastMCP, over stdio) whose tools ask the user through elicitation.

Tools: ``ask_profile`` (form mode: a name and a favourite language), ``ask_password`` (form
mode asking for a password, which an ACP client must never be shown), ``connect_account``
(URL mode). Each returns, as text, what came back: ``accept {...}``, ``decline`` or ``cancel``.
"""

from __future__ import annotations

import json

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field

server = FastMCP("eliciting-server", log_level="WARNING")


class Profile(BaseModel):
    name: str = Field(description="Your name")
    language: str = Field(
        description="Favourite language", json_schema_extra={"enum": ["python", "rust", "go"]}
    )


class Password(BaseModel):
    password: str = Field(description="The database password", json_schema_extra={"format": "password"})


def _said(result: object) -> str:
    action = getattr(result, "action", "?")
    data = getattr(result, "data", None)
    if action == "accept" and isinstance(data, BaseModel):
        return "accept " + json.dumps(data.model_dump(), sort_keys=True)
    return str(action)


@server.tool(description="Ask the user for their profile")
async def ask_profile(ctx: Context) -> str:  # type: ignore[type-arg]
    return _said(await ctx.elicit("Who are you?", schema=Profile))


@server.tool(description="Ask the user for the database password")
async def ask_password(ctx: Context) -> str:  # type: ignore[type-arg]
    return _said(await ctx.elicit("The database password, please", schema=Password))


@server.tool(description="Connect the user's account")
async def connect_account(ctx: Context) -> str:  # type: ignore[type-arg]
    result = await ctx.elicit_url("Sign in to Example", "https://example.com/connect?e=42", "oauth-42")
    if getattr(result, "action", None) == "accept":  # the sign-in "happened": say so
        await ctx.session.send_elicit_complete("oauth-42")
    return _said(result)


if __name__ == "__main__":
    server.run(transport="stdio")
