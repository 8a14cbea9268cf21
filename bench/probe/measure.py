#!/usr/bin/env python3
"""What real stdio servers do with a `server/discover` request sent first, before any
`initialize` (the probe Ferry's client sends when it does not know the server's era), and
how long they take to start.

Each run of each server is two fresh processes:

- probe: `server/discover` (2026-07-28 `_meta`) written at once after spawn; what comes
  back within --wait seconds (a result, an error and its code, nothing, or the process
  exiting) and when, in ms after spawn; then `initialize` (2025-06-18) on the same
  connection, to see that the fallback still works after the probe;
- start-up: `initialize` written at once after spawn; ms to its answer.

Usage: bench/probe/install.sh DIR && bench/probe/measure.py DIR [--runs N] [--wait S]
       [--ferry PATH] [--json FILE]

Only the standard library; the servers come from DIR (see install.sh).
"""

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))

DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
        }
    },
}


def initialize(id_):
    return {
        "jsonrpc": "2.0",
        "id": id_,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }


def servers(env_dir, ferry):
    node = os.path.join(env_dir, "node_modules")
    venv = os.path.join(env_dir, ".venv", "bin")
    scratch = os.path.join(env_dir, "files")
    os.makedirs(scratch, exist_ok=True)
    found = [
        ("ts-sdk minimal (node)", ["node", os.path.join(env_dir, "ts_server.mjs")], None),
        (
            "py-sdk minimal (MCPServer)",
            [os.path.join(venv, "python"), os.path.join(HERE, "py_server.py")],
            None,
        ),
        (
            "py-sdk 1.x minimal (FastMCP)",
            [os.path.join(env_dir, ".venv-v1", "bin", "python"), os.path.join(HERE, "py_server.py")],
            None,
        ),
        (
            "server-everything (node)",
            [os.path.join(node, ".bin", "mcp-server-everything"), "stdio"],
            None,
        ),
        (
            "server-everything (npx)",
            ["npx", "--no-install", "@modelcontextprotocol/server-everything", "stdio"],
            env_dir,
        ),
        (
            "server-filesystem (node)",
            [os.path.join(node, ".bin", "mcp-server-filesystem"), scratch],
            None,
        ),
        ("mcp-server-time (python)", [os.path.join(venv, "mcp-server-time")], None),
        ("mcp-server-fetch (python)", [os.path.join(venv, "mcp-server-fetch")], None),
    ]
    if ferry:
        found.append(("ferry serve", [ferry, "serve"], None))
    return found


class Proc:
    """A server process with its stdout lines timed by a reader thread."""

    def __init__(self, command, cwd):
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            command,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line))
        self.lines.put((time.monotonic(), None))

    def send(self, message):
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def answer(self, id_, wait):
        """(kind, ms after spawn) of the answer to `id_` within `wait` seconds."""
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return ("none", None)
            try:
                at, line = self.lines.get(timeout=left)
            except queue.Empty:
                return ("none", None)
            ms = round((at - self.started) * 1000)
            if line is None:
                code = self.proc.wait()
                return (f"exited ({code})", ms)
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") != id_ or "method" in message:
                continue
            if "error" in message:
                error = message["error"]
                return (f"error {error.get('code')} {error.get('message', '')!r}", ms)
            return ("result", ms)

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def probe(command, cwd, wait):
    proc = Proc(command, cwd)
    proc.send(DISCOVER)
    kind, ms = proc.answer(1, wait)
    proc.send(initialize(2))
    after, _ = proc.answer(2, 30)
    proc.close()
    return {"discover": kind, "discover_ms": ms, "initialize_after": after}


def startup(command, cwd):
    proc = Proc(command, cwd)
    proc.send(initialize(1))
    kind, ms = proc.answer(1, 30)
    proc.close()
    return {"initialize": kind, "initialize_ms": ms}


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.median(values):.0f} ({min(values)}-{max(values)})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="where install.sh put the servers")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--wait", type=float, default=5.0, help="seconds to wait for the probe's answer")
    parser.add_argument("--ferry", help="a `ferry` binary, to measure `ferry serve` too")
    parser.add_argument("--json", help="write every run to this file")
    args = parser.parse_args()

    rows, runs = [], []
    for name, command, cwd in servers(os.path.abspath(args.dir), args.ferry):
        probes, starts = [], []
        for _ in range(args.runs):
            probes.append(probe(command, cwd, args.wait))
            starts.append(startup(command, cwd))
        runs.append({"server": name, "command": command, "probes": probes, "startups": starts})
        kinds = sorted({p["discover"] for p in probes})
        after = sorted({p["initialize_after"] for p in probes})
        rows.append(
            (
                name,
                "; ".join(kinds),
                spread([p["discover_ms"] for p in probes]),
                "; ".join(after),
                spread([s["initialize_ms"] for s in starts]),
            )
        )
        print(f"{name}: done", file=sys.stderr)

    print(f"{args.runs} runs per server; the probe waited {args.wait:g} s; ms after spawn, median (min-max)\n")
    print("| server | answer to a first `server/discover` | ms to that answer | `initialize` after it | ms to a first `initialize`'s answer |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
