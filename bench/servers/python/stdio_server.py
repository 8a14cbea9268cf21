"""The echo server on the official Python SDK over stdio, as its README shows: MCPServer,
a typed @mcp.tool() function, mcp.run() (stdio by default)."""

from mcp.server import MCPServer

mcp = MCPServer("py-echo")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    mcp.run()
