#!/usr/bin/env python3
"""Fail when a layer includes a layer above it (DESIGN.md, "Layers").

Layers, bottom to top: common io arrow avro parquet iceberg index table catalog
query sql. A file under src/<layer>/ may include headers of its own layer and of
layers below it, plus the public include/hyperstream.h. Front ends (cli/,
python/) may include anything.
"""
import pathlib
import re
import sys

LAYERS = ["common", "io", "arrow", "avro", "parquet", "iceberg", "index", "table", "catalog", "query", "sql"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: pathlib.Path, src: pathlib.Path):
    try:
        rel = path.resolve().relative_to(src.resolve())
    except ValueError:
        return None
    return rel.parts[0] if rel.parts and rel.parts[0] in RANK else None


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    src = root / "src"
    bad = []
    for f in sorted(src.rglob("*.[ch]")):
        mine = layer_of(f, src)
        if mine is None:
            bad.append(f"{f.relative_to(root)}: not inside a known layer directory {LAYERS}")
            continue
        for m in INCLUDE.finditer(f.read_text(errors="replace")):
            inc = m.group(1)
            if inc == "hyperstream.h":
                continue
            target = (f.parent / inc)
            theirs = layer_of(target, src) if target.exists() else None
            if theirs is None:
                cand = src / inc
                theirs = layer_of(cand, src) if cand.exists() else None
            if theirs is None:
                bad.append(f"{f.relative_to(root)}: includes unknown header \"{inc}\"")
            elif RANK[theirs] > RANK[mine]:
                line = f.read_text(errors="replace")[: m.start()].count("\n") + 1
                bad.append(f"{f.relative_to(root)}:{line}: layer '{mine}' includes \"{inc}\" "
                           f"from higher layer '{theirs}'")
    for b in bad:
        print(b, file=sys.stderr)
    if bad:
        print(f"check_layers: {len(bad)} violation(s)", file=sys.stderr)
        return 1
    print("check_layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
