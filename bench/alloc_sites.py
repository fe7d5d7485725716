"""Where the allocations come from: symbolises a trace written by malloc_count.c's trace mode and ranks the sites.

    MALLOC_COUNT_TRACE=/tmp/trace-%p.bin BENCH_PARTS=alloc BENCH_QUICK=1 python3 bench/bench.py
    python3 bench/alloc_sites.py /tmp/trace-1234.bin [--match ingest] [--top 30] [--stacks 5]

Each record is one sampled allocation's call stack (one in every MALLOC_COUNT_TRACE_EVERY allocations); the
addresses are mapped to binaries with the FILE.maps copy of /proc/PID/maps, symbolised with llvm-symbolizer
(inlined frames expanded) and demangled with swift-demangle. A site is the first frame in the project's own
sources (Sources/), shown with the allocating call under it; --match keeps only stacks with a frame matching
a regular expression (e.g. `RoomManager.ingest|Participant.drain` for the packet path)."""
import argparse
import collections
import os
import re
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True

DEPTH = 31
HEADER = 8
MAGIC = 0x3165636172746D63


def read_trace(path):
    data = open(path, "rb").read()
    magic, used, capacity, every = struct.unpack_from("<4Q", data, 0)
    if magic != MAGIC:
        sys.exit(f"{path}: not a malloc_count trace")
    stacks = []
    for i in range(min(used, capacity)):
        off = (HEADER + i * (DEPTH + 1)) * 8
        n = struct.unpack_from("<Q", data, off)[0]
        if 0 < n <= DEPTH:
            stacks.append(struct.unpack_from(f"<{n}Q", data, off + 8))
    return stacks, every, used


def read_maps(path):
    maps = []
    for line in open(path):
        parts = line.split(maxsplit=5)
        if len(parts) < 6 or not parts[5].startswith("/"):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        maps.append((lo, hi, int(parts[2], 16), parts[5].strip()))
    return maps


def elf_loads(path, cache={}):
    """(is_pie, [(p_offset, p_vaddr, p_filesz)]) of an ELF64 file's PT_LOAD segments."""
    if path not in cache:
        with open(path, "rb") as f:
            head = f.read(64)
            e_type = struct.unpack_from("<H", head, 16)[0]
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            f.seek(phoff)
            table = f.read(phentsize * phnum)
        loads = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", table, i * phentsize)
            if p_type == 1:
                loads.append((p_offset, p_vaddr, p_filesz))
        cache[path] = (e_type == 3, loads)
    return cache[path]


def module_address(maps, addr):
    """(binary, address to symbolise in it) for a runtime address, or None."""
    for lo, hi, offset, path in maps:
        if lo <= addr < hi:
            try:
                pie, loads = elf_loads(path)
            except OSError:
                return None
            if not pie:
                return path, addr
            file_offset = addr - lo + offset
            for p_offset, p_vaddr, p_filesz in loads:
                if p_offset <= file_offset < p_offset + p_filesz:
                    return path, file_offset - p_offset + p_vaddr
            return path, file_offset
    return None


def symbolizer():
    for name in ("llvm-symbolizer", "/opt/swift/usr/bin/llvm-symbolizer"):
        found = shutil.which(name)
        if found:
            return found
    sys.exit("llvm-symbolizer not found")


def symbolise(maps, addresses):
    """address → [(function, file:line)], innermost (inlined) first."""
    by_module = collections.defaultdict(list)
    for a in addresses:
        # Return addresses point after the call: look up the call instruction itself.
        where = module_address(maps, a - 1)
        if where:
            by_module[where[0]].append((a, where[1]))
    out = {}
    tool = symbolizer()
    for path, items in by_module.items():
        query = "".join(f"{hex(rel)}\n" for _, rel in items)
        text = subprocess.run([tool, "--obj", path, "--inlining", "--functions=linkage"], input=query,
                              capture_output=True, text=True).stdout
        blocks = text.strip("\n").split("\n\n")
        for (a, _), block in zip(items, blocks):
            lines = block.split("\n")
            frames = [(lines[i], lines[i + 1] if i + 1 < len(lines) else "?") for i in range(0, len(lines) - 1, 2)]
            base = os.path.basename(path)
            out[a] = [(fn if fn != "??" else f"{base}+{a:#x}", loc) for fn, loc in frames] or [(f"{base}+{a:#x}", "?")]
    for a in addresses:
        out.setdefault(a, [(f"{a:#x}", "?")])
    demangle(out)
    return out


def demangle(table):
    names = sorted({fn for frames in table.values() for fn, _ in frames})
    tool = shutil.which("swift-demangle") or "/opt/swift/usr/bin/swift-demangle"
    try:
        text = subprocess.run([tool, "--simplified", "--compact"], input="\n".join(names) + "\n",
                              capture_output=True, text=True).stdout.split("\n")
    except OSError:
        return
    mapping = dict(zip(names, text)) if len(text) >= len(names) else {}
    for a, frames in table.items():
        table[a] = [(mapping.get(fn, fn) or fn, loc) for fn, loc in frames]


def short(loc):
    i = loc.find("/Sources/")
    return loc[i + 1:] if i >= 0 else os.path.basename(loc.split(":")[0]) + loc[len(loc.split(":")[0]):]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--maps", help="copy of /proc/PID/maps (default: TRACE.maps)")
    ap.add_argument("--match", help="keep stacks with a frame (function or file) matching this regex")
    ap.add_argument("--exclude", help="drop stacks with a frame matching this regex")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--stacks", type=int, default=0, help="print the full stack of the top N sites")
    args = ap.parse_args()

    stacks, every, used = read_trace(args.trace)
    maps = read_maps(args.maps or args.trace + ".maps")
    table = symbolise(maps, sorted({a for s in stacks for a in s}))
    expanded = [[f for a in s for f in table[a]] for s in stacks]
    if args.match:
        rx = re.compile(args.match)
        expanded = [s for s in expanded if any(rx.search(fn) or rx.search(loc) for fn, loc in s)]
    if args.exclude:
        rx = re.compile(args.exclude)
        expanded = [s for s in expanded if not any(rx.search(fn) or rx.search(loc) for fn, loc in s)]

    sites = collections.Counter()
    examples = {}
    for s in expanded:
        own = next((i for i, (_, loc) in enumerate(s) if "/Sources/" in loc), None)
        if own is None:
            key = (s[0][0], short(s[0][1]), "")
        else:
            callee = s[own - 1][0] if own > 0 else ""
            key = (s[own][0], short(s[own][1]), callee)
        sites[key] += 1
        examples.setdefault(key, s)

    total = len(expanded)
    print(f"{used} records taken ({every} allocations each); {total} kept{' matching ' + args.match if args.match else ''}")
    print(f"{'share':>6} {'samples':>7}  site (first frame in Sources/) ← allocating call")
    for key, count in sites.most_common(args.top):
        fn, loc, callee = key
        print(f"{100 * count / max(1, total):5.1f}% {count:7d}  {loc}  {fn[:110]}")
        if callee:
            print(f"{'':16}← {callee[:120]}")
    for key, _ in sites.most_common(args.stacks):
        print("\n--- " + key[1] + "  " + key[0][:100])
        for fn, loc in examples[key]:
            print(f"    {short(loc):50} {fn[:110]}")


if __name__ == "__main__":
    main()
