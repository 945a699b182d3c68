#!/usr/bin/env python3
"""Fails when a layer includes one above it (docs/ARCHITECTURE.md's order).

Each folder of recon/ has a rank; a file may include headers of its own folder
or of folders of a lower rank. ui/ and app/ sit above the whole engine, and the
engine never includes them.
"""
import pathlib
import re
import sys

RANK = {
    "core": 0,
    "phantom": 1, "trajectory": 1, "nufft": 1, "operators": 1,
    "gridding": 2, "linop": 2,
    "priors": 2.5,  # sparse priors: operators and their prox, on linop
    "solvers": 3,
    "backend": 4, "cuda": 4,
    "sense": 5,  # SENSE operators, coil maps, prewhitening: written on linop, maps gridded by a backend
    "session": 6,
    "ct": 3.5,  # cone-beam CT: geometry, phantom, DD projectors on linop, FDK; solved by solvers
    "io": 2,  # readers, writers and recipes: core and the regulariser names of operators
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(root: pathlib.Path) -> int:
    errors = []
    for path in sorted((root / "recon").rglob("*")):
        if path.suffix not in {".hpp", ".cpp", ".cu", ".cuh", ".in"}:
            continue
        layer = path.relative_to(root / "recon").parts[0]
        if layer not in RANK:
            errors.append(f"{path}: folder recon/{layer} has no rank in {__file__}")
            continue
        for inc in INCLUDE.findall(path.read_text(errors="replace")):
            parts = inc.split("/")
            if parts[0] in {"ui", "app"}:
                errors.append(f"{path}: the engine includes {inc}")
            elif parts[0] == "recon" and len(parts) > 2:
                other = parts[1]
                if other not in RANK:
                    errors.append(f"{path}: includes {inc} of an unranked folder")
                elif other != layer and RANK[other] >= RANK[layer] and not (layer == "cuda" and other == "backend"):
                    errors.append(f"{path}: recon/{layer} (rank {RANK[layer]}) includes {inc} (rank {RANK[other]})")
    for e in errors:
        print(e)
    print(f"{0 if errors else 1} passed, {1 if errors else 0} failed")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(pathlib.Path(sys.argv[1])))
