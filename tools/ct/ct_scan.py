"""Shared by the CT peer benchmarks (rtk_bench.py, astra_iterative.py): a ReconStudio CT scan as numpy
arrays, and image quality exactly as `reconstudio-cli compare --modality ct` measures it.

A scan comes from our HDF5 layout (docs/FILE_FORMAT.md, group /ct; read with h5py) or from the .npz
that `export_npz` writes from it (for the GPU machine, which has numpy but no h5py). Arrays keep our
memory order: projections [view][row v][column u], volumes [z][y][x]; conventions in
docs/CONVENTIONS.md ("Cone-beam CT").
"""
import numpy as np

GEOMETRY_KEYS = ("source_to_isocentre_mm", "source_to_detector_mm", "detector_columns", "detector_rows",
                 "pixel_u_mm", "pixel_v_mm", "offset_u_mm", "offset_v_mm", "volume_size", "voxel_mm",
                 "volume_offset_mm", "photons")


def read_scan(path):
    """A dict: the geometry attributes, angles_rad, projections (float32), counts and truth (or None)."""
    if path.endswith(".npz"):
        with np.load(path) as z:
            scan = {k: z[k] for k in z.files}
        for k in ("counts", "truth"):
            scan.setdefault(k, None)
        scan["name"] = str(scan["name"])
        return scan
    import h5py
    with h5py.File(path, "r") as f:
        if "ct" not in f:
            raise SystemExit(f"{path}: no /ct group (not a ReconStudio CT scan)")
        g = f["ct"]
        scan = {k: np.asarray(g.attrs[k]) for k in GEOMETRY_KEYS if k in g.attrs}
        scan.setdefault("offset_u_mm", np.float64(0))
        scan.setdefault("offset_v_mm", np.float64(0))
        scan.setdefault("volume_offset_mm", np.zeros(3))
        scan.setdefault("photons", np.float64(0))
        name = g.attrs.get("name", b"")
        scan["name"] = name.decode() if isinstance(name, bytes) else str(name)
        scan["angles_rad"] = g["angles_rad"][...]
        scan["projections"] = g["projections"][...].astype(np.float32)
        scan["counts"] = g["counts"][...] if "counts" in g else None
        scan["truth"] = g["truth"][...] if "truth" in g else None
    return scan


def export_npz(scan, path):
    arrays = {k: v for k, v in scan.items() if v is not None}
    np.savez(path, **arrays)


def quality(image, truth):
    """(PSNR dB, percent error) as recon/core/metrics.cpp: whole volume, no mask, no rescaling
    (our FDK is quantitative, and an iterative result is never rescaled)."""
    image = np.asarray(image, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    err = image - truth
    mse = np.mean(err * err)
    psnr = 20 * np.log10(np.max(np.abs(truth)) / np.sqrt(mse))
    return psnr, 100 * np.linalg.norm(err) / np.linalg.norm(truth)


def describe(scan):
    n = [int(s) for s in scan["volume_size"]]
    photons = float(scan["photons"])
    return (f"{scan['name']}: {n[0]}x{n[1]}x{n[2]} voxels of {float(scan['voxel_mm'][0]):g} mm, "
            f"{len(scan['angles_rad'])} views, detector {int(scan['detector_columns'])}x{int(scan['detector_rows'])}, "
            + (f"{photons:g} photons" if photons > 0 else "noiseless"))
