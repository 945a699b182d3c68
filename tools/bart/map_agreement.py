#!/usr/bin/python3
"""How two sets of coil maps (BART cfl arrays [x, y, z, coils]) agree inside a region, up to
the one phase per voxel that maps may choose: per voxel both coil vectors are normalised to
unit length and the error after the best phase is sqrt(2 - 2 |<s, r>|). The definition of
recon::compareCoilMaps (recon/sense/coil_maps.hpp), which the tests use; this script is its
reading for files, for tools/bart/maps.sh.

usage: map_agreement.py ESTIMATE REFERENCE OBJECT [THRESHOLD]
  OBJECT: an image (cfl); the region is |OBJECT| > THRESHOLD (default 0.05) there.
Prints: voxels compared, voxels outside a mask (either map zero), rms, p99 and max error.
Needs Debian's python3-numpy."""
import sys

import numpy as np


def read_cfl(base):
    base = base[:-4] if base.endswith((".cfl", ".hdr")) else base
    with open(base + ".hdr") as f:
        lines = [l for l in f.read().splitlines() if l and not l.startswith("#")]
    dims = [int(v) for v in lines[0].split()]
    data = np.fromfile(base + ".cfl", dtype=np.complex64)
    if data.size != int(np.prod(dims)):
        sys.exit(f"{base}.cfl: {data.size} values, the header says {dims}")
    return data.reshape(dims, order="F").astype(np.complex128)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    est, ref, obj = (read_cfl(a) for a in sys.argv[1:4])
    threshold = float(sys.argv[4]) if len(sys.argv) == 5 else 0.05
    voxels = int(np.prod(obj.shape[:3]))
    if est.size % voxels or est.size != ref.size:
        sys.exit(f"sizes differ: {est.shape}, {ref.shape}, object {obj.shape}")
    est = est.reshape(voxels, -1, order="F")
    ref = ref.reshape(voxels, -1, order="F")
    region = np.abs(obj.reshape(voxels, order="F")) > threshold
    e2 = np.sum(np.abs(est) ** 2, axis=1)
    r2 = np.sum(np.abs(ref) ** 2, axis=1)
    covered = region & (e2 > 0) & (r2 > 0)
    inner = np.abs(np.sum(np.conj(est) * ref, axis=1))
    fit = np.minimum(1.0, inner[covered] / np.sqrt(e2[covered] * r2[covered]))
    err = np.sort(np.sqrt(np.maximum(0.0, 2 - 2 * fit)))
    uncovered = int(np.count_nonzero(region)) - err.size
    if err.size == 0:
        print(f"0 voxels compared, {uncovered} outside a mask")
        return
    p99 = err[min(err.size - 1, int(0.99 * err.size))]
    print(f"{err.size} voxels compared, {uncovered} outside a mask: rms {np.sqrt(np.mean(err ** 2)):.4f}, "
          f"p99 {p99:.4f}, max {err[-1]:.4f}")


if __name__ == "__main__":
    main()
