"""The echo server on the official Python SDK over Streamable HTTP (sessions, the SDK's
defaults), as its README shows: mcp.run(transport="streamable-http").
Usage: python http.py PORT"""

import sys

from mcp.server import MCPServer

mcp = MCPServer("py-echo")


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    mcp.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
