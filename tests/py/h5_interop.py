"""HDF5 interop checks for avguard logs (INTERFACES section 2), driven by tests/it/hdf5_interop.rs.

  h5_interop.py write FILE      write a valid log with h5py (plus extra datasets/attributes readers must ignore)
  h5_interop.py check FILE      open a log written by avguard with h5py and pandas; validate the layout
                                independently and print a JSON summary
  h5_interop.py bad DIR         write one malformed log per failure kind; print {"name": "dataset or attribute"}
                                as JSON
  h5_interop.py variants DIR    write the valid log of `write` as DIR/base.h5, then once per way another writer
                                may store the same values (other numeric widths and byte orders, numpy bools,
                                gzip and LZF compression, fixed-length string attributes); print the variant names as JSON,
                                with whether their values are the base file's exactly
"""
import json
import sys

missing = []
try:
    import numpy as np
except ImportError:
    missing.append("numpy")
try:
    import h5py
except ImportError:
    missing.append("h5py")
try:
    import pandas as pd
except ImportError:
    missing.append("pandas")
if missing:
    print("missing python package(s): " + ", ".join(missing), file=sys.stderr)
    sys.exit(3)

F64 = ["t", "x", "y", "z", "heading", "speed", "accel", "stopline_dist", "junction_dist", "crosswalk_dist",
       "stopsign_dist", "speed_limit"]
F32 = ["throttle", "brake", "steering"]
I32 = ["gear", "turn_signal", "light_color", "lane_number", "planned_turn"]
U8 = ["light_blink", "signal_ahead", "traffic_jam", "horn", "high_beam", "low_beam", "hazard", "collision",
      "destination"]
OBS_F64 = ["x", "y", "heading", "speed", "length", "width"]


def frame_columns(n):
    t = np.arange(n) * 0.1
    cols = {
        "t": t, "x": 10.0 + 2.0 * t, "y": np.full(n, -1.75), "z": np.zeros(n), "heading": np.full(n, 0.25),
        "speed": np.full(n, 2.0), "accel": np.linspace(-1.0, 1.0, n), "stopline_dist": 30.0 - 2.0 * t,
        "junction_dist": np.full(n, np.inf), "crosswalk_dist": np.full(n, np.inf),
        "stopsign_dist": np.full(n, np.inf), "speed_limit": np.full(n, 13.9),
        "throttle": np.full(n, 12.5), "brake": np.zeros(n), "steering": np.full(n, -3.0),
        "gear": np.ones(n), "turn_signal": np.zeros(n), "light_color": np.full(n, 2),
        "lane_number": np.full(n, 2), "planned_turn": np.full(n, 1),
    }
    for name in U8:
        cols[name] = np.zeros(n)
    cols["collision"][n - 1] = 1
    cols["signal_ahead"][:] = 1
    return cols


def write_log(path, n=5, mutate=None):
    cols = frame_columns(n)
    # Frame k has k obstacles: offsets 0, 0, 1, 3, 6, ...
    counts = np.arange(n)
    offset = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
    rows = int(offset[-1])
    obs = {name: np.arange(rows, dtype=np.float64) + 0.5 for name in OBS_F64}
    obs["id"] = np.arange(rows)
    obs["type"] = np.full(rows, 5)
    obs["priority"] = (np.arange(rows) % 2)
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "avguard-log"
        f.attrs["version"] = 1
        f.attrs["scenario"] = "from_h5py"
        f.attrs["run_id"] = "py-0"
        f.attrs["frame_period_s"] = 0.1
        f.attrs["seed"] = np.uint64(18446744073709551615)
        f.attrs["comment"] = "extra attribute, ignored by readers"
        g = f.create_group("frames")
        types = {**{k: "f8" for k in F64}, **{k: "f4" for k in F32}, **{k: "i4" for k in I32},
                 **{k: "u1" for k in U8}}
        for name, values in cols.items():
            g.create_dataset(name, data=np.asarray(values).astype(types[name]))
        g.create_dataset("extra_signal", data=np.zeros(n))
        o = f.create_group("obstacles")
        o.create_dataset("offset", data=offset)
        o.create_dataset("id", data=obs["id"].astype("i4"))
        o.create_dataset("type", data=obs["type"].astype("i4"))
        for name in OBS_F64:
            o.create_dataset(name, data=obs[name])
        o.create_dataset("priority", data=obs["priority"].astype("u1"))
        f.create_group("extra_group")
        if mutate:
            mutate(f)


def check(path):
    with h5py.File(path, "r") as f:
        assert f.attrs["format"] == "avguard-log", f.attrs["format"]
        assert int(f.attrs["version"]) == 1
        g = f["frames"]
        n = g["t"].shape[0]
        for names, kind, size in ((F64, "f", 8), (F32, "f", 4), (I32, "i", 4), (U8, "u", 1)):
            for name in names:
                ds = g[name]
                assert ds.dtype.kind == kind and ds.dtype.itemsize == size, (name, ds.dtype)
                assert ds.shape == (n,), (name, ds.shape)
                assert ds.chunks is not None, f"{name} is not chunked"
                assert ds.maxshape == (None,), f"{name} is not extendable"
        t = g["t"][:]
        assert np.all(np.diff(t) > 0), "t not increasing"
        o = f["obstacles"]
        offset = o["offset"][:]
        assert o["offset"].dtype == np.uint64 and offset.shape == (n + 1,) and offset[0] == 0
        rows = int(offset[-1])
        for name in ["id", "type", "priority"] + OBS_F64:
            assert o[name].shape == (rows,), (name, o[name].shape)
        # pandas: the frame table as a DataFrame, no special options.
        df = pd.DataFrame({name: g[name][:] for name in g.keys()})
        obstacles = pd.DataFrame({name: o[name][:] for name in o.keys() if name != "offset"})
        summary = {
            "frames": int(len(df)),
            "duration_s": float(df["t"].iloc[-1] - df["t"].iloc[0]),
            "collision": bool(df["collision"].any()),
            "obstacle_rows": int(len(obstacles)),
            "max_speed": float(df["speed"].max()),
            "scenario": str(f.attrs["scenario"]),
            "seed": int(f.attrs["seed"]) if "seed" in f.attrs else None,
        }
    print(json.dumps(summary))


def replace_in(group, name, data, **options):
    def go(f):
        del f[group][name]
        f[group].create_dataset(name, data=data, **options)
    return go


def retype(group, name, dtype, **options):
    def go(f):
        values = f[group][name][:]
        replace_in(group, name, values.astype(dtype), **options)(f)
    return go


def retype_all(group, kinds, **options):
    """Every dataset of `group` whose numpy kind is a key of `kinds` rewritten with that dtype."""
    def go(f):
        for name in list(f[group].keys()):
            values = f[group][name][:]
            if values.dtype.kind in kinds:
                replace_in(group, name, values.astype(kinds[values.dtype.kind]), **options)(f)
    return go


def fixed_string_attrs(pad):
    """`format`, `scenario` and `run_id` as fixed-length strings, NUL- or space-padded (C, MATLAB)."""
    def go(f):
        for key in ("format", "scenario", "run_id"):
            text = str(f.attrs[key]).encode()
            size = len(text) + 6
            tid = h5py.h5t.C_S1.copy()
            tid.set_size(size)
            tid.set_strpad(pad)
            del f.attrs[key]
            attr = h5py.h5a.create(f.id, key.encode(), tid, h5py.h5s.create(h5py.h5s.SCALAR))
            fill = b" " if pad == h5py.h5t.STR_SPACEPAD else b"\0"
            attr.write(np.array(text + fill * (size - len(text)), dtype=f"S{size}"))
    return go


def no_obstacles(f):
    """Frames without road users: every offset 0, every obstacle column empty."""
    o = f["obstacles"]
    for name in list(o.keys()):
        values = o[name][:]
        del o[name]
        o.create_dataset(name, data=np.zeros_like(values) if name == "offset" else values[:0])


def variants(directory):
    flags = ["collision", "signal_ahead", "light_blink", "destination"]
    cases = {
        # name: (mutation, whether every value is the base file's exactly)
        "floats_as_f32": (retype_all("frames", {"f": "f4"}), False),
        "floats_big_endian": (retype_all("frames", {"f": ">f8"}), True),
        "ints_as_i64": (retype_all("frames", {"i": "i8"}), True),
        "ints_as_i16": (retype_all("frames", {"i": "i2"}), True),
        "flags_as_bool": (lambda f: [retype("frames", n, "?")(f) for n in flags], True),
        "priority_as_bool": (retype("obstacles", "priority", "?"), True),
        "obstacle_ints_as_i64": (retype_all("obstacles", {"i": "i8", "u": "i8"}), True),
        "gzip_chunked": (retype_all("frames", {"f": "f8", "i": "i4", "u": "u1"},
                                    compression="gzip", chunks=(2,)), True),
        "lzf_chunked": (retype_all("frames", {"f": "f8", "i": "i4", "u": "u1"},
                                   compression="lzf", chunks=(2,)), True),
        "floats_as_f16": (retype_all("frames", {"f": "f2"}), False),
        "fixed_strings_nul_padded": (fixed_string_attrs(h5py.h5t.STR_NULLPAD), True),
        "fixed_strings_space_padded": (fixed_string_attrs(h5py.h5t.STR_SPACEPAD), True),
        "string_attrs_in_lists": (
            lambda f: [f.attrs.__setitem__(k, [str(f.attrs[k])]) for k in ("format", "scenario", "run_id")],
            True),
        "no_obstacles": (no_obstacles, False),
        "numeric_attrs_other_widths": (
            lambda f: [f.attrs.__setitem__("version", np.int64(1)),
                       f.attrs.__setitem__("frame_period_s", np.float32(0.1)),
                       f.attrs.__setitem__("seed", np.int32(7))], False),
    }
    write_log(f"{directory}/base.h5")
    out = {}
    for name, (mutate, exact) in cases.items():
        write_log(f"{directory}/{name}.h5", mutate=mutate)
        out[name] = exact
    print(json.dumps(out))


def external_storage(f):
    """`/frames/x` stored in a file outside the log (`/etc/hostname`: any file the writer named)."""
    n = f["frames"]["x"].shape[0]
    del f["frames"]["x"]
    f["frames"].create_dataset("x", shape=(n,), dtype="u1", external=[("/etc/hostname", 0, h5py.h5f.UNLIMITED)])


def virtual_missing_source(f):
    """`/frames/x` a virtual dataset of a file that does not exist: read as fill values."""
    n = f["frames"]["x"].shape[0]
    del f["frames"]["x"]
    layout = h5py.VirtualLayout(shape=(n,), dtype="f8")
    layout[:] = h5py.VirtualSource("no_such_file.h5", "x", shape=(n,))
    f["frames"].create_virtual_dataset("x", layout, fillvalue=0.0)


def external_link(directory):
    """`/frames/x` an external link to a dataset of another file, which holds the same values."""
    def go(f):
        values = f["frames"]["x"][:]
        with h5py.File(f"{directory}/linked_x.h5", "w") as other:
            other.create_dataset("x", data=values)
        del f["frames"]["x"]
        f["frames"]["x"] = h5py.ExternalLink("linked_x.h5", "/x")
    return go


def bad(directory):
    def drop(name):
        return lambda f: f["frames"].__delitem__(name)

    def replace(name, data):
        def go(f):
            del f["frames"][name]
            f["frames"].create_dataset(name, data=data)
        return go

    def set_value(name, index, value):
        def go(f):
            f["frames"][name][index] = value
        return go

    cases = {
        "missing_speed": (drop("speed"), "/frames/speed"),
        "gear_as_float": (replace("gear", np.ones(5)), "/frames/gear"),
        "x_too_short": (replace("x", np.zeros(4)), "/frames/x"),
        "t_not_increasing": (set_value("t", 3, 0.1), "/frames/t"),
        "nan_speed": (set_value("speed", 2, np.nan), "/frames/speed"),
        "bad_offsets": (lambda f: f["obstacles"]["offset"].__setitem__(2, 9), "/obstacles/offset"),
        "missing_obstacles": (lambda f: f.__delitem__("obstacles"), "/obstacles"),
        "bool_out_of_range": (
            replace_in("frames", "collision",
                       np.array([0, 0, 2, 0, 1], dtype="i1").view(
                           h5py.enum_dtype({"FALSE": 0, "TRUE": 1}, basetype="i1"))),
            "/frames/collision"),
        "scenario_two_strings": (lambda f: f.attrs.__setitem__("scenario", ["a", "b"]), "scenario"),
        # Read into u8, HDF5 would saturate -1 to 0; the reader reads integers as stored.
        "flag_minus_one": (replace_in("frames", "collision", np.array([0, -1, 0, 0, 1], dtype="i4")),
                           "/frames/collision"),
        # Data from outside the file: any file the writer named, or a virtual dataset's missing source.
        "external_storage": (external_storage, "/frames/x"),
        "virtual_missing_source": (virtual_missing_source, "/frames/x"),
        "external_link": (external_link(directory), "/frames/x"),
        "frame_period_1e-9": (lambda f: f.attrs.__setitem__("frame_period_s", 1e-9), "frame_period_s"),
    }
    out = {}
    for name, (mutate, dataset) in cases.items():
        write_log(f"{directory}/{name}.h5", mutate=mutate)
        out[name] = dataset
    print(json.dumps(out))


if __name__ == "__main__":
    mode, arg = sys.argv[1], sys.argv[2]
    {"write": write_log, "check": check, "bad": bad, "variants": variants}[mode](arg)
