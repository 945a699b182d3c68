#!/usr/bin/env python3
"""RTK's FDK against ours on the same scans, the same machine, the same run (issue 18: "our FDK at
least RTK's speed at equal image error").

RTK (PyPI itk-rtk, CPU) is a benchmark peer, not a dependency; install it into an ignored venv:
  python3 -m venv build-venv && build-venv/bin/pip install itk-rtk==2.7.0.post1 h5py
  build-venv/bin/python tools/ct/rtk_bench.py --cli build-cpu/app/cli/reconstudio-cli
Each case is simulated by `reconstudio-cli simulate --modality ct` (exact line integrals of the
Shepp-Logan ellipsoids, so no inverse crime for either), read back with h5py, reconstructed by RTK's
FDKConeBeamReconstructionFilter and by `reconstudio-cli recon --only fdk --backend cpu`, both on
--threads cores, interleaved, median of --repeat. Errors: PSNR and percent error against the analytic
truth on the whole volume, no rescaling, exactly as `compare` (ct_scan.quality; checked against the
CLI's own figure for our image).

Geometry mapping (checked for every view before timing, see check_geometry): RTK rotates about its
y axis, its source at gantry angle θ at (sin θ, 0, cos θ)·SID, detector u along (cos θ, 0, −sin θ),
v along +y. Ours rotates about z, source at (cos β, sin β, 0)·D_so, e_u = (−sin β, cos β, 0),
e_v = +z. With RTK (X, Y, Z) = ours (x, z, −y) and θ = β + 90° the two coincide; our volume
[z][y][x] is RTK's [Z][Y][X] = [−y][z][x] after a transpose and a flip, and pixel centres map through
the projection image's origin and spacing.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ct_scan  # noqa: E402

# name -> `simulate --modality ct` arguments
CASES = {
    "ct-2d": ["--case", "ct-2d"],
    "ct-3d": ["--case", "ct-3d"],
    "cone-128": ["--volume", "128x128x128", "--voxel", "2", "--detector", "192x192", "--pixel", "3.2",
                 "--views", "360", "--sod", "500", "--sdd", "800"],
    "cone-256": ["--volume", "256x256x256", "--voxel", "1", "--detector", "384x384", "--pixel", "1.6",
                 "--views", "360", "--sod", "500", "--sdd", "800"],
}
RTK_WINDOWS = {"ram-lak": 0.0, "hann": 1.0}  # RTK's Hann cut frequency (fraction of Nyquist; 0: none)


class Rtk:
    """One scan set up in RTK: geometry, projection stack and the output volume's grid."""

    def __init__(self, scan):
        """A fan-beam scan (one row, one slice) goes in as a thin cone beam: RTK backprojects a
        one-row detector as nothing (its interpolation needs a row on each side), so the row is
        repeated on 3 rows; the z = 0 slice projects onto the middle one exactly and reads only it."""
        import itk
        from itk import RTK as rtk
        self.itk, self.rtk = itk, rtk
        self.scan = scan
        self.n = [int(v) for v in scan["volume_size"]]
        self.d = [float(v) for v in scan["voxel_mm"]]
        self.o = [float(v) for v in scan["volume_offset_mm"]]
        self.nu, self.nv = int(scan["detector_columns"]), int(scan["detector_rows"])
        self.pu, self.pv = float(scan["pixel_u_mm"]), float(scan["pixel_v_mm"])
        self.fan = self.nv == 1 and self.n[2] == 1
        projections = scan["projections"]
        if self.fan:
            self.nv, self.pv = 3, self.d[2] * float(scan["source_to_detector_mm"]) / float(scan["source_to_isocentre_mm"])
            projections = np.repeat(projections, 3, axis=1)
        self.u0, self.v0 = float(scan["offset_u_mm"]), float(scan["offset_v_mm"])
        self.geometry = rtk.ThreeDCircularProjectionGeometry.New()
        for beta in scan["angles_rad"]:
            self.geometry.AddProjection(float(scan["source_to_isocentre_mm"]), float(scan["source_to_detector_mm"]),
                                        float(np.degrees(beta)) + 90.0, 0.0, 0.0)
        self.projections = self.stack(projections)

    def stack(self, projections):
        p = self.itk.image_from_array(np.ascontiguousarray(projections, dtype=np.float32))
        p.SetSpacing([self.pu, self.pv, 1.0])
        p.SetOrigin([-(self.nu - 1) / 2 * self.pu + self.u0, -(self.nv - 1) / 2 * self.pv + self.v0, 0.0])
        return p

    def volume(self, ours=None):
        """An RTK volume ([Z][Y][X] = [−y][z][x]) of our [z][y][x] array (zeros when None)."""
        nx, ny, nz = self.n if ours is None else (ours.shape[2], ours.shape[1], ours.shape[0])
        a = np.zeros((ny, nz, nx), np.float32) if ours is None else np.ascontiguousarray(
            np.asarray(ours, np.float32).transpose(1, 0, 2)[::-1])
        v = self.itk.image_from_array(a)
        v.SetSpacing([self.d[0], self.d[2], self.d[1]])
        v.SetOrigin([-(nx - 1) / 2 * self.d[0] + self.o[0], -(nz - 1) / 2 * self.d[2] + self.o[2],
                     -(ny - 1) / 2 * self.d[1] - self.o[1]])
        return v

    @staticmethod
    def ours(rtk_array):
        return rtk_array[::-1].transpose(1, 0, 2)

    def check_geometry(self):
        """Largest distance (mm) between RTK's source and detector pixel positions and ours over all views."""
        dso, dsd = float(self.scan["source_to_isocentre_mm"]), float(self.scan["source_to_detector_mm"])
        worst = 0.0
        to_rtk = lambda p: np.array([p[0], p[2], -p[1]])
        corners = [(0, 0), (self.nu - 1, 0), (0, self.nv - 1), (self.nu - 1, self.nv - 1)]
        for i, beta in enumerate(self.scan["angles_rad"]):
            c, s = np.cos(beta), np.sin(beta)
            source = to_rtk(dso * np.array([c, s, 0.0]))
            worst = max(worst, np.linalg.norm(np.array(self.geometry.GetSourcePosition(i))[:3] - source))
            m = self.geometry.GetProjectionCoordinatesToFixedSystemMatrix(i)
            for iu, iv in corners:
                u = (iu - (self.nu - 1) / 2) * self.pu + self.u0
                v = (iv - (self.nv - 1) / 2) * self.pv + self.v0
                pixel = -(dsd - dso) * np.array([c, s, 0.0]) + u * np.array([-s, c, 0.0]) + v * np.array([0, 0, 1.0])
                h = np.array([u, v, 0.0, 1.0])  # RTK projection coordinates of the same pixel
                rtk_pixel = np.array([sum(m(r, k) * h[k] for k in range(4)) for r in range(3)])
                worst = max(worst, np.linalg.norm(rtk_pixel - to_rtk(pixel)))
        return worst

    def forward_project(self, volume):
        """RTK's Joseph projection of our [z][y][x] volume, as our [view][v][u] array (a fan-beam
        slice repeated on 3 slices, so that Joseph's interpolation along z has neighbours, and the
        middle row kept)."""
        itk, rtk = self.itk, self.rtk
        image = itk.Image[itk.F, 3]
        f = rtk.JosephForwardProjectionImageFilter[image, image].New()
        f.SetInput(0, self.stack(np.zeros((len(self.scan["angles_rad"]), self.nv, self.nu), np.float32)))
        f.SetInput(1, self.volume(np.repeat(volume, 3, axis=0) if self.fan else volume))
        f.SetGeometry(self.geometry)
        f.Update()
        p = itk.array_from_image(f.GetOutput())
        return p[:, 1:2] if self.fan else p

    def fdk(self, window):
        """(our-order volume, wall seconds, CPU seconds) of RTK's FDK with the ramp and `window`."""
        itk, rtk = self.itk, self.rtk
        f = rtk.FDKConeBeamReconstructionFilter[itk.Image[itk.F, 3]].New()
        f.SetInput(0, self.volume())
        f.SetInput(1, self.projections)
        f.SetGeometry(self.geometry)
        ramp = f.GetRampFilter()
        ramp.SetTruncationCorrection(0.0)  # ours does not extrapolate beyond the detector either
        ramp.SetHannCutFrequency(RTK_WINDOWS[window])
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        f.Update()
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return self.ours(itk.array_from_image(f.GetOutput())).astype(np.float64), wall, cpu


def ours_fdk(cli, scan_path, window, threads, image_path):
    """(volume, FDK seconds as the CLI reports them, process wall and CPU seconds, the CLI's PSNR and error)."""
    cmd = [cli, "recon", "--modality", "ct", "--input", scan_path, "--only", "fdk", "--backend", "cpu",
           "--threads", str(threads), "--window", window, "--fdk-output", image_path]
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stderr}")
    m = re.search(r"fdk: PSNR ([\d.]+) dB, error ([\d.]+) % \(([\d.]+) s\)", run.stderr)
    if not m:
        raise SystemExit(f"no FDK figures in the CLI's output:\n{run.stderr}")
    import itk
    image = itk.array_from_image(itk.imread(image_path)).astype(np.float64)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return image, float(m.group(3)), wall, cpu, float(m.group(1)), float(m.group(2))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="reconstudio-cli (a CPU build is enough)")
    ap.add_argument("--cases", default="ct-2d,ct-3d,cone-128", help=f"comma separated, of {', '.join(CASES)}")
    ap.add_argument("--windows", default="ram-lak", help="comma separated: ram-lak, hann")
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="cores for both (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", help="where the scans and images go (default: a temporary folder)")
    args = ap.parse_args()
    import itk
    itk.MultiThreaderBase.SetGlobalDefaultNumberOfThreads(args.threads)
    work = args.workdir or tempfile.mkdtemp(prefix="rtk_bench_")
    os.makedirs(work, exist_ok=True)
    version = subprocess.run([args.cli, "--version"], capture_output=True, text=True).stdout.strip()
    print(f"RTK (itk-rtk) with ITK {itk.Version.GetITKVersion()}, {version}; {args.threads} threads each, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start; median of {args.repeat}")
    rows = []
    for name in args.cases.split(","):
        if name not in CASES:
            raise SystemExit(f"unknown case '{name}' ({', '.join(CASES)})")
        path = os.path.join(work, f"{name}.h5")
        run = subprocess.run([args.cli, "simulate", "--modality", "ct", *CASES[name], "--output", path, "--quiet"],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise SystemExit(f"simulating {name} failed:\n{run.stderr}")
        scan = ct_scan.read_scan(path)
        rtk = Rtk(scan)
        print(f"\n== {ct_scan.describe(scan)}", flush=True)
        mismatch = rtk.check_geometry()
        if mismatch > 1e-6:
            raise SystemExit(f"RTK's geometry differs from ours by {mismatch:.3g} mm: the mapping is wrong")
        fp = rtk.forward_project(scan["truth"])
        fp_error = np.linalg.norm(fp - scan["projections"]) / np.linalg.norm(scan["projections"])
        print(f"   mapping: source and detector corners within {mismatch:.1e} mm of ours in every view; RTK's "
              f"Joseph projection of the voxelised truth vs our analytic data: {100 * fp_error:.2f} % (rms relative)")
        for window in args.windows.split(","):
            if window not in RTK_WINDOWS:
                raise SystemExit(f"unknown window '{window}' ({', '.join(RTK_WINDOWS)})")
            rtk_times, ours_times = [], []
            for _ in range(args.repeat):  # interleaved, so that the machine's load falls on both alike
                rtk_image, wall, cpu = rtk.fdk(window)
                rtk_times.append((wall, cpu))
                ours_image, seconds, wall, cpu, cli_psnr, cli_error = ours_fdk(
                    args.cli, path, window, args.threads, os.path.join(work, f"{name}_fdk.nii"))
                ours_times.append((seconds, wall, cpu))
            rtk_q, ours_q = ct_scan.quality(rtk_image, scan["truth"]), ct_scan.quality(ours_image, scan["truth"])
            if abs(ours_q[0] - cli_psnr) > 0.01 or abs(ours_q[1] - cli_error) > 0.01:
                raise SystemExit(f"this script's metric ({ours_q}) differs from the CLI's ({cli_psnr}, {cli_error})")
            apart = np.linalg.norm(rtk_image - ours_image) / np.linalg.norm(ours_image)
            rtk_s = statistics.median(t[0] for t in rtk_times)
            ours_s = statistics.median(t[0] for t in ours_times)
            rows.append((name, window, rtk_s, statistics.median(t[1] for t in rtk_times), rtk_q, ours_s,
                         statistics.median(t[1] for t in ours_times), statistics.median(t[2] for t in ours_times),
                         ours_q, apart))
            print(f"   {window}: RTK {rtk_s:.3f} s, {rtk_q[0]:.2f} dB, {rtk_q[1]:.2f} %; ours {ours_s:.3f} s, "
                  f"{ours_q[0]:.2f} dB, {ours_q[1]:.2f} %; images apart by {apart:.1e} (relative)", flush=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    print("| case | window | RTK FDK s (CPU s) | RTK PSNR dB / error % | ours FDK s (process wall s, CPU s) "
          "| ours PSNR dB / error % | RTK s / ours s | images apart |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, window, rs, rc, rq, os_, ow, oc, oq, apart in rows:
        print(f"| {name} | {window} | {rs:.3f} ({rc:.2f}) | {rq[0]:.2f} / {rq[1]:.2f} | {os_:.3f} ({ow:.2f}, {oc:.2f}) "
              f"| {oq[0]:.2f} / {oq[1]:.2f} | {rs / os_:.2f} | {apart:.1e} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
