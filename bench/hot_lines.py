#!/usr/bin/env python3
"""How much code a server runs per call: its hot code's size in 64-byte cache lines.

Reads a callgrind profile written with `--dump-instr=yes` of a run of CALLS calls, keeps the
instructions executed at least FRACTION * CALLS times (the code every call runs), and prints
how many distinct 64-byte lines they occupy, by object and by function. A server whose hot
code is larger than the CPU's L1 instruction cache (32 KiB here) misses it on every call:
`valgrind --tool=cachegrind --cache-sim=yes` counts those misses (`I1mr`), and they are why
instructions per call alone understate the distance to the floor (bench/results/profile.md,
"The instruction cache").

    target/release/loadgen stdio --warmup 0 --rss-after 0 --seq 0 --pipe 5000 -- \\
        valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.5000 \\
        target/release/echo_stdio
    bench/hot_lines.py cg.5000 5000 [--fraction 0.8] [--functions 30]
"""

import argparse
import collections
import re

NAME = re.compile(r"(c?fn|c?ob)=\((\d+)\)(?: (.*))?")


def number(text):
    return int(text, 16) if text.startswith("0x") else int(text)


def self_costs(path):
    """(object, address, function) -> instructions executed there (not in its callees)."""
    costs = collections.Counter()
    names = {"fn": {}, "ob": {}}
    obj = function = None
    address = 0
    after_call = False
    with open(path) as profile:
        for line in profile:
            line = line.rstrip("\n")
            if not line:
                continue
            named = NAME.match(line)
            if named:
                kind, key, name = named.groups()
                table = names[kind.lstrip("c")]
                if name:
                    table[key] = name
                if kind == "fn":
                    function = table.get(key)
                elif kind == "ob":
                    obj = table.get(key, key)
                continue
            if line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
                continue
            if line[0] not in "+-*0123456789":
                continue
            fields = line.split()
            position = fields[0]
            if position[0] == "+":
                address += number(position[1:])
            elif position[0] == "-":
                address -= number(position[1:])
            elif position != "*":
                address = number(position)
            if after_call:
                after_call = False
                continue
            if len(fields) >= 3:
                costs[(obj, address, function)] += int(fields[2])
    return costs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profile", help="callgrind output written with --dump-instr=yes")
    parser.add_argument("calls", type=int, help="calls the profiled run served")
    parser.add_argument("--fraction", type=float, default=0.8,
                        help="hot: executed at least this many times per call (default 0.8)")
    parser.add_argument("--functions", type=int, default=30, help="functions to list")
    args = parser.parse_args()

    least = args.fraction * args.calls
    hot = [(key, n) for key, n in self_costs(args.profile).items() if n >= least]
    lines = {(obj, address >> 6) for (obj, address, _), _ in hot}
    by_function = collections.defaultdict(set)
    instructions = collections.Counter()
    for (obj, address, function), _ in hot:
        by_function[function].add((obj, address >> 6))
        instructions[function] += 1
    print(f"hot code: {len(lines)} lines of 64 bytes = {len(lines) * 64 / 1024:.1f} KiB, "
          f"{len(hot)} distinct instructions, "
          f"{sum(n for _, n in hot) / args.calls:.0f} executed per call")
    for obj, n in collections.Counter(obj for obj, _ in lines).most_common():
        print(f"  {n:5} lines in {obj}")
    print("lines  instructions  function")
    ranked = sorted(by_function.items(), key=lambda item: -len(item[1]))
    for function, function_lines in ranked[: args.functions]:
        print(f"{len(function_lines):5}  {instructions[function]:12}  {(function or '?')[:120]}")


if __name__ == "__main__":
    main()
