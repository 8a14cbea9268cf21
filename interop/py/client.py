"""An MCP client on the official Python SDK (PyPI `mcp`), the peer of Ferry's server in the
interop matrix. It connects in the era asked for, runs the matrix's checks against Ferry's
reference server and prints one JSON verdict per check on stdout
(`{"check": ..., "ok": ..., "detail": ...}`); it exits 1 if any check failed.

    python client.py ERA stdio COMMAND [ARGS...]   spawn a stdio server
    python client.py ERA http URL                  a Streamable HTTP server
    python client.py ERA sse URL                   a 2024-11-05 HTTP+SSE server (its GET URL)

ERA is `session` (the `initialize` handshake, 2025-11-25) or `stateless` (2026-07-28,
negotiated by the SDK's `server/discover` probe).
"""

import json
import sys
import traceback
from collections.abc import Awaitable, Callable

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.sse import sse_client
from mcp_types import CreateMessageResult, ElicitResult, ListRootsResult, Root, TextContent

failed = False


def verdict(check: str, ok: bool, detail: str) -> None:
    global failed
    failed = failed or not ok
    print(json.dumps({"check": check, "ok": ok, "detail": detail}), flush=True)


async def check(name: str, body: Callable[[], Awaitable[tuple[bool, str]]]) -> None:
    try:
        ok, detail = await body()
        verdict(name, ok, detail)
    except Exception:
        verdict(name, False, traceback.format_exc())


def text(result) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


async def sampling(_context, params) -> CreateMessageResult:
    asked = params.messages[0].content
    return CreateMessageResult(
        role="assistant",
        content=TextContent(type="text", text=f"canned answer to {getattr(asked, 'text', '?')}"),
        model="py-sdk-client",
        stop_reason="endTurn",
    )


async def elicitation(_context, _params) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada", "colour": "teal"})


async def list_roots(_context) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///interop-root", name="interop")])


async def run(client: Client, era: str) -> None:
    expected = "2026-07-28" if era == "stateless" else "2025-11-25"
    verdict("connect", client.protocol_version == expected, f"protocol {client.protocol_version}")

    async def tools():
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        missing = [n for n in ("echo", "add", "countdown", "sample") if n not in names]
        echoed = text(await client.call_tool("echo", {"text": "hello"}))
        return not missing and echoed == "hello", f"missing {missing}; echo gave {echoed}"

    async def structured_output():
        result = await client.call_tool("add", {"a": 2, "b": 40})
        return (result.structured_content or {}).get("sum") == 42, json.dumps(result.structured_content)

    async def resources():
        listed = await client.list_resources()
        read = await client.read_resource("server://info")
        first = read.contents[0]
        ok = any(str(r.uri) == "server://info" for r in listed.resources) and str(first.uri) == "server://info"
        return ok, getattr(first, "text", "")[:80]

    async def prompts():
        prompt = await client.get_prompt("code_review", {"code": "x = 1", "language": "rust"})
        body = prompt.model_dump_json()
        return "x = 1" in body and "rust" in body, body[:120]

    async def progress():
        seen: list[float] = []

        async def on_progress(value: float, _total, _message) -> None:
            seen.append(value)

        result = await client.call_tool(
            "countdown", {"steps": 3, "interval_ms": 10}, progress_callback=on_progress
        )
        ok = seen == [1, 2, 3] and text(result) == "counted 3 steps"
        return ok, f"progress {seen}; {text(result)}"

    async def cancellation():
        started = anyio.Event()
        outcome = "cancelled"

        async def on_progress(_value, _total, _message) -> None:
            started.set()

        async def call(scope: anyio.CancelScope) -> None:
            nonlocal outcome
            with scope:
                result = await client.call_tool(
                    "countdown", {"steps": 1000, "interval_ms": 50}, progress_callback=on_progress
                )
                outcome = f"a result: {result}"

        scope = anyio.CancelScope()
        async with anyio.create_task_group() as group:
            group.start_soon(call, scope)
            await started.wait()
            scope.cancel()
        # The server's tool sees the cancellation (Ferry's reference server counts them in
        # server://info; the notification is on its way, so ask until it has arrived).
        seen = 0
        for _ in range(200):
            info = await client.read_resource("server://info")
            seen = json.loads(info.contents[0].text).get("countdowns_cancelled", 0)
            if seen >= 1:
                break
            await anyio.sleep(0.025)
        # The connection carries on after the cancellation.
        after = text(await client.call_tool("echo", {"text": "still here"}))
        ok = outcome == "cancelled" and seen >= 1 and after == "still here"
        return ok, f"{outcome}; the server saw {seen} cancellation(s); then {after}"

    async def sampling_round_trip():
        got = text(await client.call_tool("sample", {"prompt": "ping?"}))
        return "py-sdk-client" in got and "canned answer to ping?" in got, got

    async def elicitation_round_trip():
        got = text(await client.call_tool("elicit", {"message": "Who are you?"}))
        return "Ada" in got and "teal" in got, got

    async def roots_round_trip():
        got = text(await client.call_tool("roots", {}))
        return "file:///interop-root" in got, got

    await check("tools", tools)
    await check("structured_output", structured_output)
    await check("resources", resources)
    await check("prompts", prompts)
    await check("progress", progress)
    await check("cancellation", cancellation)
    await check("sampling", sampling_round_trip)
    await check("elicitation", elicitation_round_trip)
    await check("roots", roots_round_trip)


async def main() -> None:
    args = sys.argv[1:]
    if len(args) < 3 or args[0] not in ("session", "stateless") or args[1] not in ("stdio", "http", "sse"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    era, transport, target = args[0], args[1], args[2:]
    if transport == "stdio":
        server = StdioServerParameters(command=target[0], args=target[1:])
    elif transport == "sse":
        server = sse_client(target[0])
    else:
        server = target[0]
    async with Client(
        server,
        mode="legacy" if era == "session" else "auto",
        read_timeout_seconds=60,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=list_roots,
        cache=None,
    ) as client:
        await run(client, era)


if __name__ == "__main__":
    anyio.run(main)
    sys.exit(1 if failed else 0)
