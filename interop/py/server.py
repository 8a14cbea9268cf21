"""An MCP server on the official Python SDK (PyPI `mcp`), the peer of Ferry's client in the
interop matrix. It offers what the matrix's checks need, under the same names as Ferry's
reference server: `echo`, `add` (structured output), `countdown` (progress; cancellable),
`cancellations` (how many calls it saw cancelled), `sample` (asks the client's model),
`elicit` (asks the user), `roots` (asks for the client's roots) — each a request to the
client in the session era, an `input_required` round trip in 2026-07-28 — the resource
`server://info` and the prompt `code_review`.

    python server.py stdio          newline-delimited JSON-RPC on stdin/stdout
    python server.py http [PORT]    Streamable HTTP on 127.0.0.1 (PORT 0 or absent: any);
                                    prints `listening http://127.0.0.1:PORT/mcp` on stdout
    python server.py sse [PORT]     the 2024-11-05 HTTP+SSE transport (GET /sse, POST
                                    /messages/); prints `listening http://127.0.0.1:PORT/sse`
"""

import socket
import sys
from typing import Annotated

import anyio
import uvicorn
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

server = MCPServer("py-sdk-interop-server", version="1.0.0", log_level="WARNING")
cancelled = 0


class Sum(BaseModel):
    sum: float


class Cancellations(BaseModel):
    cancelled: int


@server.tool(description="Send the text back.")
def echo(text: str) -> str:
    return text


@server.tool(description="Add two numbers (structured output).")
def add(a: float, b: float) -> Sum:
    return Sum(sum=a + b)


@server.tool(description="Count down, reporting progress at each step; honours cancellation.")
async def countdown(steps: int, ctx: Context, interval_ms: int = 100) -> str:
    global cancelled
    try:
        for step in range(1, steps + 1):
            await anyio.sleep(interval_ms / 1000)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
    except anyio.get_cancelled_exc_class():
        cancelled += 1
        raise
    return f"counted {steps} steps"


@server.tool(description="How many countdowns saw their cancellation.")
def cancellations() -> Cancellations:
    return Cancellations(cancelled=cancelled)


def ask_model(prompt: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=50)


@server.tool(description="Ask the client's model a question (sampling).")
async def sample(prompt: str, answer: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    blocks = answer.content if isinstance(answer.content, list) else [answer.content]
    text = "".join(b.text for b in blocks if isinstance(b, TextContent))
    return f"{answer.model} says: {text}"


class Person(BaseModel):
    name: str
    colour: str | None = None


def ask_person(message: str) -> Elicit[Person]:
    return Elicit(message, Person)


@server.tool(description="Ask the user for their name and favourite colour (form).")
async def elicit(message: str, person: Annotated[Person, Resolve(ask_person)]) -> str:
    return f"accepted: name={person.name}, colour={person.colour}"


def ask_roots() -> ListRoots:
    return ListRoots()


@server.tool(description="List the client's roots.")
async def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    lines = [f"{r.name}: {r.uri}" if r.name else str(r.uri) for r in listed.roots]
    return f"{len(lines)} roots\n" + "\n".join(lines)


@server.resource("server://info", name="info", mime_type="application/json")
def info() -> str:
    return '{"name": "py-sdk-interop-server"}'


@server.prompt(description="Ask for a review of a piece of code.")
def code_review(code: str, language: str | None = None) -> str:
    return f"Please review this {language or 'the code'}:\n\n{code}"


async def serve_http(transport: str, port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # connections wait in the backlog until uvicorn serves them
    if transport == "http":
        app, path = server.streamable_http_app(host="127.0.0.1"), "/mcp"
    else:
        app, path = server.sse_app(host="127.0.0.1"), "/sse"
    config = uvicorn.Config(app, log_level="warning")
    print(f"listening http://127.0.0.1:{sock.getsockname()[1]}{path}", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["stdio"]:
        server.run("stdio")
    elif args[:1] in (["http"], ["sse"]):
        anyio.run(serve_http, args[0], int(args[1]) if len(args) > 1 else 0)
    else:
        print("usage: python server.py stdio | http [PORT] | sse [PORT]", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
