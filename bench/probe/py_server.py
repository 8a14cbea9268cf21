"""A minimal server on the official Python SDK over stdio, as its README shows: MCPServer
(FastMCP in the 1.x releases), a typed @mcp.tool() function, mcp.run() (stdio by default)."""

try:
    from mcp.server import MCPServer
except ImportError:
    from mcp.server.fastmcp import FastMCP as MCPServer

mcp = MCPServer("py-minimal")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    mcp.run()
