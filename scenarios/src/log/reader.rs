//! Reading and validating a whole log. Extra datasets and attributes are ignored; every required one is
//! checked for presence, element type, rank, length and value rules, and each failure names the dataset.
//!
//! Nothing is allocated from a length the file declares before that length is checked against the file's
//! size: a dataset's raw data must fit in the file (or, compressed, within the best ratio a filter can
//! reach), so a hostile or corrupt header costs at most a small multiple of the file's size in memory.

use std::path::Path;

use hdf5::types::{
    FixedAscii, FixedUnicode, FloatSize, TypeDescriptor, VarLenAscii, VarLenUnicode,
};
use hdf5::{Attribute, Dataset, File, Group, H5Type};
use laws::frame::MAX_OBSTACLES;
use laws::{Frame, Obstacle};

use super::error::LogError;
use super::schema::{check, Col, BLANK_OBSTACLE, FRAME_COLUMNS, OBSTACLE_COLUMNS};
use super::{RunLog, RunMeta, FORMAT, MAX_FRAME_PERIOD_S, MIN_FRAME_PERIOD_S};

/// How many times larger than the file a filtered (compressed) dataset's raw data may be: deflate's best
/// ratio (about 1032:1, for runs of one byte). Unfiltered data must fit in the file itself.
const MAX_FILTER_RATIO: u64 = 1032;

/// Longest fixed-length string attribute read, bytes (the attributes are names and labels).
const MAX_FIXED_STRING: usize = 4096;

/// One element of a boolean dataset (numpy's `bool` as h5py writes it: an 8-bit enum `FALSE` = 0,
/// `TRUE` = 1), read as its byte so that a value outside the enum is reported, never trusted as a `bool`.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct FlagByte(u8);

// SAFETY: one byte, as the boolean enum's in-memory type (`TypeDescriptor::Boolean`) is; any byte is a
// valid `u8`.
unsafe impl H5Type for FlagByte {
    fn type_descriptor() -> TypeDescriptor {
        TypeDescriptor::Boolean
    }
}

/// Reads and validates the log at `path`.
pub fn read_log(path: &Path) -> Result<RunLog, LogError> {
    let label = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| LogError::Io {
        path: label.clone(),
        error: e,
    })?;
    if meta.is_dir() {
        // libhdf5 would say "file read failed ... errno = 21" with a buffer address.
        return Err(LogError::Io {
            path: label,
            error: std::io::Error::other("a folder, not a log file"),
        });
    }
    let file_bytes = meta.len();
    // Read without HDF5's advisory file lock. The lock belongs to the open file description, so a child
    // process forked while a writer had the file open (anything this process spawns) keeps it locked after
    // the writer closed it, and a locking reader then fails with EAGAIN. A reader gains nothing from the
    // lock: it reads files that are finished.
    let file = File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open(path)
        .map_err(LogError::hdf5(label))?;
    read_file(&file, file_bytes)
}

/// Reads and validates a log from an in-memory HDF5 file image (the bytes of a `.h5` file); `label` names
/// it in errors. The same checks as [`read_log`], with the image's length as the file's size.
pub fn read_log_image(label: &str, image: &[u8]) -> Result<RunLog, LogError> {
    let file = open_image(image).map_err(LogError::hdf5(label.to_owned()))?;
    read_file(&file, image.len() as u64)
}

/// Opens an HDF5 file image with the in-memory ("core") driver, without a backing file.
fn open_image(image: &[u8]) -> hdf5::Result<File> {
    use hdf5_sys::h5f::{H5Fopen, H5F_ACC_RDONLY};
    use hdf5_sys::h5p::H5Pset_file_image;
    let fapl = hdf5::plist::FileAccess::build()
        .core_filebacked(false)
        .finish()?;
    // A name the core driver never opens (no backing store); the image is the whole file. The name is
    // new for every image: HDF5 recognises an already open file by name and would reuse its state.
    static N_IMAGES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N_IMAGES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = std::ffi::CString::new(format!("avguard-log-image-{}-{n}.h5", std::process::id()))
        .map_err(|e| hdf5::Error::from(e.to_string()))?;
    // SAFETY: `fapl` is a live file-access property list; `H5Pset_file_image` copies `image.len()` bytes
    // from a valid slice before returning, and `H5Fopen` copies the image again into the core driver, so
    // nothing refers to `image` afterwards. The calls run under the `hdf5` crate's global lock, as all of
    // its own calls do. `from_id` takes over the one reference `H5Fopen` returned.
    let id = hdf5::sync::sync(|| unsafe {
        hdf5::h5check(H5Pset_file_image(
            fapl.id(),
            image.as_ptr().cast_mut().cast(),
            image.len(),
        ))?;
        hdf5::h5check(H5Fopen(name.as_ptr(), H5F_ACC_RDONLY, fapl.id()))
    })?;
    unsafe { hdf5::from_id::<File>(id) }
}

/// Reads and validates an open log file of `file_bytes` bytes.
pub(crate) fn read_file(file: &File, file_bytes: u64) -> Result<RunLog, LogError> {
    let r = Reader { file_bytes };
    let meta = read_meta(file)?;
    let frames_group = group(file, "frames")?;
    let t: Vec<f64> = r.read_column(&frames_group, "/frames", "t", Kind::Float, None)?;
    if t.is_empty() {
        return Err(LogError::Empty);
    }
    let n = t.len();
    let mut frames = vec![Frame::default(); n];
    for col in FRAME_COLUMNS {
        r.read_into(&frames_group, "/frames", col, &mut frames, n)?;
    }
    for (row, pair) in t.windows(2).enumerate() {
        if let [a, b] = pair {
            if b <= a {
                return Err(value_error(
                    "/frames/t",
                    row + 1,
                    "time is not strictly increasing",
                ));
            }
        }
    }

    let obstacles_group = group(file, "obstacles")?;
    let offset_ds = open_dataset(&obstacles_group, "/obstacles", "offset", Kind::Int)?;
    let offset: Vec<u64> = r
        .read_ints(&offset_ds, "/obstacles/offset", Some(n + 1))?
        .into_iter()
        .enumerate()
        .map(|(row, v)| {
            u64::try_from(v)
                .map_err(|_| value_error("/obstacles/offset", row, "offset is negative"))
        })
        .collect::<Result<_, _>>()?;
    if offset.first() != Some(&0) {
        return Err(value_error(
            "/obstacles/offset",
            0,
            "the first offset must be 0",
        ));
    }
    for (row, pair) in offset.windows(2).enumerate() {
        if let [a, b] = pair {
            if b < a {
                return Err(value_error(
                    "/obstacles/offset",
                    row + 1,
                    "offsets decrease",
                ));
            }
            if b - a > MAX_OBSTACLES as u64 {
                return Err(LogError::Value {
                    dataset: "/obstacles/offset".to_owned(),
                    row: row + 1,
                    problem: format!(
                        "frame {row} has {} obstacles, more than the limit of {MAX_OBSTACLES}",
                        b - a
                    ),
                });
            }
        }
    }
    let last = offset.last().copied().unwrap_or(0);
    // Every obstacle column must hold exactly `last` rows; checking their declared lengths (each already
    // bounded by the file's size) before allocating keeps a corrupt last offset from allocating anything.
    let rows = usize::try_from(last).unwrap_or(usize::MAX);
    for col in OBSTACLE_COLUMNS {
        r.check_rows(&obstacles_group, "/obstacles", col.name(), rows)?;
    }
    let mut obstacles = vec![BLANK_OBSTACLE; rows];
    for col in OBSTACLE_COLUMNS {
        r.read_into(&obstacles_group, "/obstacles", col, &mut obstacles, rows)?;
    }
    let mut rest: &[Obstacle] = &obstacles;
    for (frame, pair) in frames.iter_mut().zip(offset.windows(2)) {
        if let [a, b] = pair {
            // Offsets increase, end at `rows`, and the obstacles hold `rows` entries: the split exists.
            let k = usize::try_from(b - a).unwrap_or(usize::MAX).min(rest.len());
            let (mine, tail) = rest.split_at(k);
            frame.obstacles = mine.to_vec();
            rest = tail;
        }
    }
    Ok(RunLog { meta, frames })
}

/// Reading state: the file's size, which bounds every declared length.
struct Reader {
    file_bytes: u64,
}

fn group(file: &File, name: &str) -> Result<Group, LogError> {
    let full = format!("/{name}");
    if !file.link_exists(name) {
        return Err(LogError::Missing(full));
    }
    check_link(file, name, &full)?;
    let group = file.group(name).map_err(|_| LogError::WrongType {
        dataset: full.clone(),
        expected: "a group",
        found: "another kind of object".to_owned(),
    })?;
    check_same_file(file, &group, &full)?;
    Ok(group)
}

/// Refuses the link `name` of `parent` (the object `full`) when it is an external link (or another
/// user-defined kind): its target lies in another file. Asked before the link is followed, so that the
/// other file is never opened.
fn check_link(parent: &Group, name: &str, full: &str) -> Result<(), LogError> {
    /// `H5L_info1_t` with its enums as plain integers: a hostile file's link type or character set
    /// outside the Rust enums must not become one (undefined behaviour), only a number compared here.
    #[repr(C)]
    #[derive(Default)]
    struct RawLinkInfo {
        link_type: std::ffi::c_int,
        corder_valid: hdf5_sys::h5::hbool_t,
        corder: i64,
        cset: std::ffi::c_int,
        address_or_size: u64,
    }
    const _: () = assert!(
        std::mem::size_of::<RawLinkInfo>() == std::mem::size_of::<hdf5_sys::h5l::H5L_info1_t>()
    );
    let c_name = std::ffi::CString::new(name).map_err(|_| LogError::Missing(full.to_owned()))?;
    let mut info = RawLinkInfo::default();
    // SAFETY: `parent.id()` is a live group or file identifier, `c_name` a NUL-terminated string and
    // `info` a buffer of `H5L_info1_t`'s size and layout, all outliving the call, which runs under the
    // `hdf5` crate's global lock as its own calls do. Rust reads the result only as integers.
    #[allow(deprecated)]
    hdf5::sync::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5l::H5Lget_info1(
            parent.id(),
            c_name.as_ptr(),
            std::ptr::from_mut(&mut info).cast(),
            hdf5_sys::h5p::H5P_DEFAULT,
        ))
    })
    .map_err(LogError::hdf5(full.to_owned()))?;
    let hard = hdf5_sys::h5l::H5L_type_t::H5L_TYPE_HARD as std::ffi::c_int;
    let soft = hdf5_sys::h5l::H5L_type_t::H5L_TYPE_SOFT as std::ffi::c_int;
    if info.link_type == hard || info.link_type == soft {
        return Ok(());
    }
    Err(LogError::Outside {
        object: full.to_owned(),
        how: "an external link to another file",
    })
}

/// Refuses `object` (the object `full`, opened from `parent`) when it lies in another file than
/// `parent`: a soft link within the file may still lead through an external link.
fn check_same_file(
    parent: &hdf5::Location,
    object: &hdf5::Location,
    full: &str,
) -> Result<(), LogError> {
    let fileno = |l: &hdf5::Location| l.loc_info().map(|i| i.fileno);
    let (a, b) = (fileno(parent), fileno(object));
    match (a, b) {
        (Ok(a), Ok(b)) if a == b => Ok(()),
        (Ok(_), Ok(_)) => Err(LogError::Outside {
            object: full.to_owned(),
            how: "a link into another file",
        }),
        (Err(e), _) | (_, Err(e)) => Err(LogError::hdf5(full.to_owned())(e)),
    }
}

/// Refuses a dataset whose raw data lies outside the file: external raw storage (any file the writer
/// named, read when the dataset is) or a virtual dataset (drawn from other datasets, possibly in other
/// files; missing sources read as fill values).
fn check_storage(ds: &Dataset, full: &str) -> Result<(), LogError> {
    let dcpl = ds.dcpl().map_err(LogError::hdf5(full.to_owned()))?;
    let layout = dcpl.get_layout().map_err(LogError::hdf5(full.to_owned()))?;
    let outside = |how| {
        Err(LogError::Outside {
            object: full.to_owned(),
            how,
        })
    };
    if layout == hdf5::dataset::Layout::Virtual {
        return outside("a virtual dataset");
    }
    // SAFETY: `dcpl.id()` is a live dataset-creation property list, read under the crate's global lock.
    let n_external = hdf5::sync::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5p::H5Pget_external_count(dcpl.id()))
    })
    .map_err(LogError::hdf5(full.to_owned()))?;
    if n_external > 0 {
        return outside("external storage");
    }
    Ok(())
}

/// Element class a column requires.
#[derive(Clone, Copy)]
enum Kind {
    Float,
    Int,
    /// A 0/1 flag: integer, or boolean (numpy's `bool`).
    Flag,
}

/// The dataset `path/name`, whatever its element type, with its data in the file.
fn any_dataset(group: &Group, full: &str, name: &str) -> Result<Dataset, LogError> {
    if !group.link_exists(name) {
        return Err(LogError::Missing(full.to_owned()));
    }
    check_link(group, name, full)?;
    let ds = group.dataset(name).map_err(|_| LogError::WrongType {
        dataset: full.to_owned(),
        expected: "a dataset",
        found: "another kind of object".to_owned(),
    })?;
    check_same_file(group, &ds, full)?;
    check_storage(&ds, full)?;
    Ok(ds)
}

fn open_dataset(group: &Group, path: &str, name: &str, kind: Kind) -> Result<Dataset, LogError> {
    let full = format!("{path}/{name}");
    let ds = any_dataset(group, &full, name)?;
    let descriptor = ds
        .dtype()
        .and_then(|d| d.to_descriptor())
        .map_err(LogError::hdf5(full.clone()))?;
    let ok = match kind {
        Kind::Float => matches!(descriptor, TypeDescriptor::Float(_)),
        Kind::Int => matches!(
            descriptor,
            TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)
        ),
        Kind::Flag => matches!(
            descriptor,
            TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_) | TypeDescriptor::Boolean
        ),
    };
    if !ok {
        let expected = match kind {
            Kind::Float => "floating point",
            Kind::Int => "integer",
            Kind::Flag => "integer or boolean",
        };
        return Err(LogError::WrongType {
            dataset: full,
            expected,
            found: format!("{descriptor}"),
        });
    }
    if ds.ndim() != 1 {
        return Err(LogError::WrongType {
            dataset: full,
            expected: "a 1-D dataset",
            found: format!("{} dimensions", ds.ndim()),
        });
    }
    Ok(ds)
}

impl Reader {
    /// Fails unless the dataset's raw data fits in the file (see [`MAX_FILTER_RATIO`]).
    fn check_extent(&self, ds: &Dataset, full: &str) -> Result<(), LogError> {
        let rows = ds.size() as u64;
        let element = ds.dtype().map_err(LogError::hdf5(full.to_owned()))?.size() as u64;
        let bytes = rows.saturating_mul(element);
        let ratio = if ds.filters().is_empty() {
            1
        } else {
            MAX_FILTER_RATIO
        };
        if bytes > self.file_bytes.saturating_mul(ratio) {
            return Err(LogError::TooLarge {
                dataset: full.to_owned(),
                rows,
                bytes,
                file_bytes: self.file_bytes,
            });
        }
        Ok(())
    }

    /// Checks that a dataset of `path/name` declares `expected` rows, without reading it.
    fn check_rows(
        &self,
        group: &Group,
        path: &str,
        name: &str,
        expected: usize,
    ) -> Result<(), LogError> {
        let full = format!("{path}/{name}");
        let ds = any_dataset(group, &full, name)?;
        self.check_extent(&ds, &full)?;
        let found = ds.size();
        if found != expected {
            return Err(LogError::Length {
                dataset: full,
                found,
                expected,
            });
        }
        Ok(())
    }

    fn read_column<T: H5Type>(
        &self,
        group: &Group,
        path: &str,
        name: &str,
        kind: Kind,
        expected_len: Option<usize>,
    ) -> Result<Vec<T>, LogError> {
        let ds = open_dataset(group, path, name, kind)?;
        self.read_opened(&ds, &format!("{path}/{name}"), expected_len)
    }

    /// Reads the open dataset `full`, once its raw data is known to fit the file and, when given, its
    /// length to be `expected_len`.
    fn read_opened<T: H5Type>(
        &self,
        ds: &Dataset,
        full: &str,
        expected_len: Option<usize>,
    ) -> Result<Vec<T>, LogError> {
        self.check_extent(ds, full)?;
        if let Some(expected) = expected_len {
            let found = ds.size();
            if found != expected {
                return Err(LogError::Length {
                    dataset: full.to_owned(),
                    found,
                    expected,
                });
            }
        }
        ds.read_raw::<T>().map_err(LogError::hdf5(full.to_owned()))
    }

    /// The open integer dataset `full`, each value exactly as stored: any signed width and unsigned
    /// widths below 64 bits are read as `i64` (no value changes), 64-bit unsigned ones as `u64` and must
    /// fit an `i64`. (Reading straight into a narrower type would let HDF5 saturate out-of-range values
    /// silently: a flag of -1 would read as 0.)
    fn read_ints(
        &self,
        ds: &Dataset,
        full: &str,
        expected_len: Option<usize>,
    ) -> Result<Vec<i64>, LogError> {
        let unsigned64 = matches!(
            ds.dtype().and_then(|d| d.to_descriptor()),
            Ok(TypeDescriptor::Unsigned(hdf5::types::IntSize::U8))
        );
        if !unsigned64 {
            return self.read_opened(ds, full, expected_len);
        }
        let values: Vec<u64> = self.read_opened(ds, full, expected_len)?;
        values
            .into_iter()
            .enumerate()
            .map(|(row, v)| {
                i64::try_from(v)
                    .map_err(|_| value_error(full, row, "value is out of range (above 2^63 - 1)"))
            })
            .collect()
    }

    /// The open flag dataset `full` of `n` rows: integers as [`Reader::read_ints`] reads them, or
    /// booleans; every value must be 0 or 1.
    fn read_flags(&self, ds: &Dataset, full: &str, n: usize) -> Result<Vec<u8>, LogError> {
        let boolean = matches!(
            ds.dtype().and_then(|d| d.to_descriptor()),
            Ok(TypeDescriptor::Boolean)
        );
        if !boolean {
            return self
                .read_ints(ds, full, Some(n))?
                .into_iter()
                .enumerate()
                .map(|(row, v)| match v {
                    0 | 1 => Ok(v as u8),
                    _ => Err(value_error(full, row, "flag is neither 0 nor 1")),
                })
                .collect();
        }
        let bytes: Vec<FlagByte> = self.read_opened(ds, full, Some(n))?;
        bytes
            .into_iter()
            .enumerate()
            .map(|(row, FlagByte(b))| {
                if b <= 1 {
                    Ok(b)
                } else {
                    Err(value_error(full, row, "a boolean other than FALSE or TRUE"))
                }
            })
            .collect()
    }

    /// Reads one column, checks length and value rules, and stores it into `rows`.
    fn read_into<T>(
        &self,
        group: &Group,
        path: &str,
        col: &Col<T>,
        rows: &mut [T],
        n: usize,
    ) -> Result<(), LogError> {
        let name = col.name();
        let full = format!("{path}/{name}");
        let rule = col.rule();
        // Stores each value after checking it against the column's rule.
        macro_rules! fill {
            ($values:expr, $set:expr) => {{
                for (row, (target, v)) in rows.iter_mut().zip($values).enumerate() {
                    #[allow(clippy::cast_lossless)]
                    if let Some(problem) = check(rule, v as f64) {
                        return Err(value_error(&full, row, problem));
                    }
                    $set(target, v);
                }
            }};
        }
        match col {
            Col::F64(_, _, _, set) => fill!(
                self.read_column::<f64>(group, path, name, Kind::Float, Some(n))?,
                set
            ),
            Col::F32(_, _, _, set) => fill!(
                self.read_column::<f32>(group, path, name, Kind::Float, Some(n))?,
                set
            ),
            Col::I32(_, _, _, set) => {
                let ds = open_dataset(group, path, name, Kind::Int)?;
                let values = self
                    .read_ints(&ds, &full, Some(n))?
                    .into_iter()
                    .enumerate()
                    .map(|(row, v)| {
                        i32::try_from(v).map_err(|_| {
                            value_error(&full, row, "value is out of range for a 32-bit integer")
                        })
                    })
                    .collect::<Result<Vec<i32>, _>>()?;
                fill!(values, set)
            }
            Col::U8(_, _, _, set) => {
                let ds = open_dataset(group, path, name, Kind::Flag)?;
                fill!(self.read_flags(&ds, &full, n)?, set)
            }
        }
        Ok(())
    }
}

fn value_error(dataset: &str, row: usize, problem: &str) -> LogError {
    LogError::Value {
        dataset: dataset.to_owned(),
        row,
        problem: problem.to_owned(),
    }
}

fn read_meta(file: &File) -> Result<RunMeta, LogError> {
    let format = string_attr(file, "format")?;
    if format != FORMAT {
        return Err(LogError::Attribute {
            name: "format",
            problem: format!("expected \"{FORMAT}\", found {format:?}"),
        });
    }
    let version = version_attr(file)?;
    if version != i128::from(super::VERSION) {
        return Err(LogError::Attribute {
            name: "version",
            problem: format!("unsupported version {version}"),
        });
    }
    let frame_period_s = float_attr(file, "frame_period_s")?.unwrap_or(0.1);
    if !(MIN_FRAME_PERIOD_S..=MAX_FRAME_PERIOD_S).contains(&frame_period_s) {
        return Err(LogError::Attribute {
            name: "frame_period_s",
            problem: format!(
                "{frame_period_s:?} s is not a plausible frame period (from \
                 {MIN_FRAME_PERIOD_S} to {MAX_FRAME_PERIOD_S} s)"
            ),
        });
    }
    Ok(RunMeta {
        scenario: string_attr(file, "scenario")?,
        run_id: string_attr(file, "run_id")?,
        frame_period_s,
        seed: seed_attr(file)?,
    })
}

/// The root attribute `name`, or `None` when the file has none of that name.
///
/// Asked with `H5Aexists` rather than by listing the root attributes: the `hdf5` crate's listing converts
/// each attribute's character set from libhdf5's integer into a Rust enum, and a corrupt file's value
/// outside that enum is undefined behaviour there (AddressSanitizer: an out-of-bounds read formatting it;
/// found by the `log_image` campaign).
fn attr(file: &File, name: &'static str) -> Result<Option<Attribute>, LogError> {
    let c_name = std::ffi::CString::new(name).map_err(|e| LogError::Attribute {
        name,
        problem: e.to_string(),
    })?;
    // SAFETY: `file.id()` is a live file identifier and `c_name` a NUL-terminated string that outlives
    // the call; the call runs under the `hdf5` crate's global lock, as all of its own calls do.
    let exists = hdf5::sync::sync(|| unsafe {
        hdf5::h5check(hdf5_sys::h5a::H5Aexists(file.id(), c_name.as_ptr()))
    })
    .map_err(LogError::hdf5("reading root attributes"))?;
    if exists <= 0 {
        return Ok(None);
    }
    file.attr(name)
        .map(Some)
        .map_err(LogError::hdf5(format!("attribute `{name}`")))
}

fn string_attr(file: &File, name: &'static str) -> Result<String, LogError> {
    let a = attr(file, name)?.ok_or(LogError::Attribute {
        name,
        problem: "missing".to_owned(),
    })?;
    let bad = |problem: String| LogError::Attribute { name, problem };
    let descriptor = a
        .dtype()
        .and_then(|d| d.to_descriptor())
        .map_err(|e| bad(e.to_string()))?;
    // The bytes are checked here: the hdf5 crate's `as_str` trusts the file to hold valid UTF-8 (ASCII)
    // and builds the `&str` unchecked, and a hostile file's invalid text then panics wherever it is
    // formatted (found by the `log_image` fuzz target).
    let bytes = match descriptor {
        TypeDescriptor::VarLenUnicode => one::<VarLenUnicode>(&a)
            .map(|s| s.as_bytes().to_vec())
            .map_err(|e| bad(e.to_string()))?,
        TypeDescriptor::VarLenAscii => {
            let bytes = one::<VarLenAscii>(&a)
                .map(|s| s.as_bytes().to_vec())
                .map_err(|e| bad(e.to_string()))?;
            if !bytes.is_ascii() {
                return Err(bad("an ASCII string holds non-ASCII bytes".to_owned()));
            }
            bytes
        }
        // Fixed-length strings (numpy's `bytes_`, C and MATLAB writers), read through HDF5's string
        // conversion into a longer buffer: padding becomes trailing NULs, which `as_bytes` leaves out.
        TypeDescriptor::FixedAscii(len) | TypeDescriptor::FixedUnicode(len)
            if len > MAX_FIXED_STRING =>
        {
            return Err(bad(format!(
                "a fixed-length string of {len} bytes (at most {MAX_FIXED_STRING})"
            )))
        }
        TypeDescriptor::FixedAscii(_) => {
            let bytes = one::<FixedAscii<MAX_FIXED_STRING>>(&a)
                .map(|s| s.as_bytes().to_vec())
                .map_err(|e| bad(e.to_string()))?;
            if !bytes.is_ascii() {
                return Err(bad("an ASCII string holds non-ASCII bytes".to_owned()));
            }
            bytes
        }
        TypeDescriptor::FixedUnicode(_) => one::<FixedUnicode<MAX_FIXED_STRING>>(&a)
            .map(|s| s.as_bytes().to_vec())
            .map_err(|e| bad(e.to_string()))?,
        other => return Err(bad(format!("expected a string, found {other}"))),
    };
    String::from_utf8(bytes).map_err(|e| bad(format!("not valid UTF-8 ({e})")))
}

/// The one value of a scalar attribute or of a one-element array attribute (h5py writes `['text']` so).
fn one<T: H5Type>(a: &Attribute) -> hdf5::Result<T> {
    if a.is_scalar() {
        return a.read_scalar::<T>();
    }
    if a.size() != 1 {
        return Err(format!("expected one value, found {}", a.size()).into());
    }
    let values = a.read_raw::<T>()?;
    values
        .into_iter()
        .next()
        .ok_or_else(|| "expected one value, found none".into())
}

/// The `version`, as stored: an unsigned one read as `u64` (read as `i64`, HDF5 would turn 2^64 - 1 into
/// 2^63 - 1, and the error would name a version the file does not hold).
fn version_attr(file: &File) -> Result<i128, LogError> {
    let a = attr(file, "version")?.ok_or(LogError::Attribute {
        name: "version",
        problem: "missing".to_owned(),
    })?;
    let unsigned = matches!(
        a.dtype().and_then(|d| d.to_descriptor()),
        Ok(TypeDescriptor::Unsigned(_))
    );
    if unsigned {
        numeric_value::<u64>(&a, "version", Kind::Int).map(i128::from)
    } else {
        numeric_value::<i64>(&a, "version", Kind::Int).map(i128::from)
    }
}

/// The optional `seed`: an unsigned integer, or a signed one that is not negative (read as stored, so
/// that HDF5 does not turn a negative seed into 0).
fn seed_attr(file: &File) -> Result<Option<u64>, LogError> {
    let Some(a) = attr(file, "seed")? else {
        return Ok(None);
    };
    let signed = matches!(
        a.dtype().and_then(|d| d.to_descriptor()),
        Ok(TypeDescriptor::Integer(_))
    );
    if !signed {
        return numeric_value(&a, "seed", Kind::Int).map(Some);
    }
    let v: i64 = numeric_value(&a, "seed", Kind::Int)?;
    u64::try_from(v).map(Some).map_err(|_| LogError::Attribute {
        name: "seed",
        problem: format!("negative ({v})"),
    })
}

/// The optional float attribute `name`, as the shortest decimal that its stored width reads back as: a
/// float32 `0.1` (0.100000001490116…) is 0.1, as numpy prints it and its writer meant it; a float64 and an
/// integer read as stored.
fn float_attr(file: &File, name: &'static str) -> Result<Option<f64>, LogError> {
    let Some(a) = attr(file, name)? else {
        return Ok(None);
    };
    let v: f64 = numeric_value(&a, name, Kind::Float)?;
    Ok(Some(match a.dtype().and_then(|d| d.to_descriptor()) {
        Ok(TypeDescriptor::Float(FloatSize::U4)) => shortest_at_width(v, |x| f64::from(x as f32)),
        Ok(TypeDescriptor::Float(FloatSize::U2)) => {
            shortest_at_width(v, |x| half::f16::from_f64(x).to_f64())
        }
        _ => v,
    }))
}

/// The number of fewest significant digits that `narrow` (rounding to the width `v` was stored at) turns
/// back into `v`; `v` itself when it is not finite.
pub(crate) fn shortest_at_width(v: f64, narrow: impl Fn(f64) -> f64) -> f64 {
    if !v.is_finite() {
        return v;
    }
    (1..=17)
        .filter_map(|digits| format!("{v:.*e}", digits - 1).parse::<f64>().ok())
        .find(|&x| narrow(x) == v)
        .unwrap_or(v)
}

/// The one numeric value of the attribute `name` (a scalar or a one-element array) of the class `kind`.
fn numeric_value<T: H5Type>(a: &Attribute, name: &'static str, kind: Kind) -> Result<T, LogError> {
    let bad = |problem: String| LogError::Attribute { name, problem };
    let descriptor = a
        .dtype()
        .and_then(|d| d.to_descriptor())
        .map_err(|e| bad(e.to_string()))?;
    let ok = match kind {
        Kind::Float => matches!(
            descriptor,
            TypeDescriptor::Float(_) | TypeDescriptor::Integer(_)
        ),
        Kind::Int | Kind::Flag => matches!(
            descriptor,
            TypeDescriptor::Integer(_) | TypeDescriptor::Unsigned(_)
        ),
    };
    if !ok || !a.is_scalar() && a.size() != 1 {
        return Err(bad(format!(
            "expected a numeric scalar, found {descriptor}"
        )));
    }
    one::<T>(a).map_err(|e| bad(e.to_string()))
}
