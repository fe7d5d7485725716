#!/usr/bin/env python3
"""Checks that Package.swift declares exactly the modules each Swift target imports.

A target that imports a module it does not declare builds only by luck (another target pulled the module in);
a declared module it never imports is a dependency nobody needs. Reads `swift package dump-package` and the
`import` lines of each target's sources. Exit 1 with one line per mismatch.
"""
import json
import os
import re
import subprocess
import sys

SYSTEM = {"Foundation", "FoundationNetworking", "FoundationEssentials", "Dispatch", "Glibc", "Darwin", "Musl",
          "Synchronization", "Testing", "XCTest", "_Concurrency", "os"}
IMPORT = re.compile(r"^\s*(?:@testable\s+|@_exported\s+|@preconcurrency\s+)*import\s+(?:(?:struct|class|enum|func|protocol)\s+)?(\w+)")


def target_path(target):
    if target.get("path"):
        return target["path"]
    return os.path.join("Tests" if target["type"] == "test" else "Sources", target["name"])


def declared(target):
    names = set()
    for dep in target["dependencies"]:
        kind, value = next(iter(dep.items()))
        names.add(value[0])  # byName / target: [name, condition]; product: [name, package, ...]
    return names


def imported(path):
    names = set()
    for root, _, files in os.walk(path):
        for f in files:
            if not f.endswith(".swift"):
                continue
            with open(os.path.join(root, f), encoding="utf-8") as fh:
                for line in fh:
                    m = IMPORT.match(line)
                    if m:
                        names.add(m.group(1))
    return names


def main():
    package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True,
                                        text=True).stdout)
    problems = []
    for target in package["targets"]:
        if target["type"] == "system":
            continue
        path = target_path(target)
        uses = imported(path) - SYSTEM - {target["name"]}
        decl = declared(target)
        for name in sorted(uses - decl):
            problems.append(f"{target['name']}: imports {name} but Package.swift does not declare it")
        for name in sorted(decl - uses):
            problems.append(f"{target['name']}: declares {name} but never imports it")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
