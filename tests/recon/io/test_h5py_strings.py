#!/usr/bin/env python3
"""String attributes as h5py writes them, in all four ways HDF5 stores a string:
fixed-length null-padded (np.bytes_, h5py's default for bytes), fixed-length
space-padded, fixed-length null-terminated, and variable-length (Python str).
A ReconStudio file is made with `simulate`, its /dataset string attributes are
rewritten each way, and `compare --json` must read them back exactly (a
null-padded 'cycles-per-fov' used to come back as 'cycles-per-fo' and be refused).

Usage: test_h5py_strings.py RECONSTUDIO_CLI   (skips with 77 without h5py)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import h5py
    import numpy as np
except ImportError:
    print("SKIP: h5py is not installed (Debian: python3-h5py)")
    sys.exit(77)

ATTRIBUTES = {"name": "phantom-z", "source": "made by h5py", "trajectory_units": "cycles-per-fov", "basis": "box"}


def write_string(obj, key, text, how):
    """Replaces attribute `key` of `obj` with `text` stored as `how`."""
    if key in obj.attrs:
        del obj.attrs[key]
    if how == "variable-length":
        obj.attrs[key] = text  # h5py writes str as a variable-length UTF-8 string
        return
    if how == "null-padded":
        obj.attrs[key] = np.bytes_(text)  # fixed length, exactly len(text), H5T_STR_NULLPAD
        return
    pad, size = {"space-padded": (h5py.h5t.STR_SPACEPAD, len(text) + 5),
                 "null-terminated": (h5py.h5t.STR_NULLTERM, len(text) + 1)}[how]
    tid = h5py.h5t.C_S1.copy()
    tid.set_size(size)
    tid.set_strpad(pad)
    stored = text.encode().ljust(size, b" " if pad == h5py.h5t.STR_SPACEPAD else b"\0")
    space = h5py.h5s.create(h5py.h5s.SCALAR)
    attr = h5py.h5a.create(obj.id, key.encode(), tid, space)
    attr.write(np.array(stored, dtype=f"S{size}"), mtype=tid)


def check_stored(path, how):
    """The file holds what the test meant (h5py's own reading)."""
    with h5py.File(path, "r") as f:
        tid = f["dataset"].attrs.get_id("trajectory_units").get_type()
        if how == "variable-length":
            assert tid.is_variable_str(), how
        else:
            expected = {"null-padded": h5py.h5t.STR_NULLPAD, "space-padded": h5py.h5t.STR_SPACEPAD,
                        "null-terminated": h5py.h5t.STR_NULLTERM}[how]
            assert not tid.is_variable_str() and tid.get_strpad() == expected, how


def main(cli):
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.h5")
        r = subprocess.run([cli, "simulate", "--case", "small-2d", "--output", base, "--quiet"], capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            print("FAIL: simulate:", r.stderr)
            return 1
        for how in ("null-padded", "space-padded", "null-terminated", "variable-length"):
            path = os.path.join(tmp, how + ".h5")
            shutil.copy(base, path)
            with h5py.File(path, "r+") as f:
                for key, text in ATTRIBUTES.items():
                    write_string(f["dataset"], key, text, how)
            check_stored(path, how)
            r = subprocess.run([cli, "compare", "--input", path, "--iterations", "1", "--json", "--quiet"],
                               capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print(f"FAIL {how}: {r.stderr.strip()}")
                failed = True
                continue
            case = json.loads(r.stdout.strip().splitlines()[-1])["case"]
            if case["name"] != ATTRIBUTES["name"] or "originally made by h5py" not in case["source"] \
                    or "cycles per FOV" not in case["source"]:
                print(f"FAIL {how}: read back as {case['name']!r}, {case['source']!r}")
                failed = True
                continue
            print(f"OK {how}: {case['name']!r}, {case['source']!r}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
