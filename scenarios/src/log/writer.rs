//! Streaming writer: chunked, extendable 1-D datasets, appended in buffered blocks.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, File, Group, H5Type};
use laws::Frame;

use super::error::LogError;
use super::schema::{check_frame, Col, FRAME_COLUMNS, OBSTACLE_COLUMNS};
use super::{RunLog, RunMeta, FORMAT, VERSION};

/// Rows per HDF5 chunk (and per buffered block): ~100 s of frames at 10 Hz.
const CHUNK_ROWS: usize = 1024;

/// One dataset with its pending rows.
struct Column<T> {
    dataset: Dataset,
    name: String,
    pending: Vec<T>,
    written: usize,
}

impl<T: H5Type + Copy> Column<T> {
    fn create(group: &Group, path: &str, name: &str) -> Result<Column<T>, LogError> {
        let dataset = group
            .new_dataset::<T>()
            .chunk(CHUNK_ROWS)
            .obj_track_times(false)
            .shape(0..)
            .create(name)
            .map_err(LogError::hdf5(format!("creating `{path}/{name}`")))?;
        Ok(Column {
            dataset,
            name: format!("{path}/{name}"),
            pending: Vec::with_capacity(CHUNK_ROWS),
            written: 0,
        })
    }

    fn flush(&mut self) -> Result<(), LogError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let end = self.written + self.pending.len();
        let err = LogError::hdf5(format!("writing `{}`", self.name));
        self.dataset
            .resize(end)
            .and_then(|()| self.dataset.write_slice(&self.pending, self.written..end))
            .map_err(err)?;
        self.written = end;
        self.pending.clear();
        Ok(())
    }
}

/// A typed column of either table.
enum AnyColumn {
    F64(Column<f64>),
    F32(Column<f32>),
    I32(Column<i32>),
    U8(Column<u8>),
}

impl AnyColumn {
    fn create<T>(group: &Group, path: &str, col: &Col<T>) -> Result<AnyColumn, LogError> {
        let name = col.name();
        Ok(match col {
            Col::F64(..) => AnyColumn::F64(Column::create(group, path, name)?),
            Col::F32(..) => AnyColumn::F32(Column::create(group, path, name)?),
            Col::I32(..) => AnyColumn::I32(Column::create(group, path, name)?),
            Col::U8(..) => AnyColumn::U8(Column::create(group, path, name)?),
        })
    }

    fn push<T>(&mut self, col: &Col<T>, row: &T) {
        match (self, col) {
            (AnyColumn::F64(c), Col::F64(_, _, get, _)) => c.pending.push(get(row)),
            (AnyColumn::F32(c), Col::F32(_, _, get, _)) => c.pending.push(get(row)),
            (AnyColumn::I32(c), Col::I32(_, _, get, _)) => c.pending.push(get(row)),
            (AnyColumn::U8(c), Col::U8(_, _, get, _)) => c.pending.push(get(row)),
            // Columns are created from the same table entries they are pushed with.
            _ => unreachable!("column created from a different schema entry"),
        }
    }

    fn pending(&self) -> usize {
        match self {
            AnyColumn::F64(c) => c.pending.len(),
            AnyColumn::F32(c) => c.pending.len(),
            AnyColumn::I32(c) => c.pending.len(),
            AnyColumn::U8(c) => c.pending.len(),
        }
    }

    fn flush(&mut self) -> Result<(), LogError> {
        match self {
            AnyColumn::F64(c) => c.flush(),
            AnyColumn::F32(c) => c.flush(),
            AnyColumn::I32(c) => c.flush(),
            AnyColumn::U8(c) => c.flush(),
        }
    }
}

/// Streams a run into an HDF5 log. Frames are buffered and written in blocks of `CHUNK_ROWS`; call
/// [`LogWriter::flush`] to push buffered rows to the file, and [`LogWriter::finish`] to complete it.
///
/// A log needs at least one frame: finishing an empty writer leaves a file that [`super::read_log`]
/// rejects, which is right for a session that recorded nothing.
pub struct LogWriter {
    file: File,
    frame_cols: Vec<AnyColumn>,
    obstacle_cols: Vec<AnyColumn>,
    offset: Column<u64>,
    rows: u64,
    frames: usize,
    last_t: Option<f64>,
}

impl LogWriter {
    /// Creates (truncates) `path` and writes the root attributes.
    pub fn create(path: &Path, meta: &RunMeta) -> Result<LogWriter, LogError> {
        let file = File::with_options()
            .with_fcpl(|p| p.obj_track_times(false))
            .create(path)
            .map_err(LogError::hdf5(path.display().to_string()))?;
        write_str_attr(&file, "format", FORMAT)?;
        write_attr(&file, "version", &VERSION)?;
        write_str_attr(&file, "scenario", &meta.scenario)?;
        write_str_attr(&file, "run_id", &meta.run_id)?;
        write_attr(&file, "frame_period_s", &meta.frame_period_s)?;
        if let Some(seed) = meta.seed {
            write_attr(&file, "seed", &seed)?;
        }
        let group = |name: &str| {
            file.create_group_builder()
                .obj_track_times(false)
                .create(name)
                .map_err(LogError::hdf5(format!("creating group `/{name}`")))
        };
        let frames = group("frames")?;
        let obstacles = group("obstacles")?;
        let frame_cols = FRAME_COLUMNS
            .iter()
            .map(|c| AnyColumn::create(&frames, "/frames", c))
            .collect::<Result<_, _>>()?;
        let obstacle_cols = OBSTACLE_COLUMNS
            .iter()
            .map(|c| AnyColumn::create(&obstacles, "/obstacles", c))
            .collect::<Result<_, _>>()?;
        let mut offset = Column::create(&obstacles, "/obstacles", "offset")?;
        offset.pending.push(0);
        Ok(LogWriter {
            file,
            frame_cols,
            obstacle_cols,
            offset,
            rows: 0,
            frames: 0,
            last_t: None,
        })
    }

    /// Buffers one frame. Rejects a frame the reader would reject (time not increasing, NaN, negative
    /// speed, ...), so that every finished log reads back.
    pub fn append(&mut self, frame: &Frame) -> Result<(), LogError> {
        check_frame(frame, self.last_t).map_err(|problem| LogError::BadFrame {
            index: self.frames,
            problem,
        })?;
        for (col, spec) in self.frame_cols.iter_mut().zip(FRAME_COLUMNS) {
            col.push(spec, frame);
        }
        for obstacle in &frame.obstacles {
            for (col, spec) in self.obstacle_cols.iter_mut().zip(OBSTACLE_COLUMNS) {
                col.push(spec, obstacle);
            }
        }
        self.rows += frame.obstacles.len() as u64;
        self.offset.pending.push(self.rows);
        self.frames += 1;
        self.last_t = Some(frame.t);
        let obstacle_backlog = self.obstacle_cols.first().map_or(0, AnyColumn::pending);
        if self.offset.pending.len() >= CHUNK_ROWS || obstacle_backlog >= 8 * CHUNK_ROWS {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes buffered rows to the file and asks HDF5 to flush it, so a reader sees a consistent prefix.
    pub fn flush(&mut self) -> Result<(), LogError> {
        for col in self
            .frame_cols
            .iter_mut()
            .chain(self.obstacle_cols.iter_mut())
        {
            col.flush()?;
        }
        self.offset.flush()?;
        self.file
            .flush()
            .map_err(LogError::hdf5("flushing the log file"))
    }

    /// Flushes and closes the file.
    pub fn finish(mut self) -> Result<(), LogError> {
        self.flush()?;
        self.file
            .close()
            .map_err(LogError::hdf5("closing the log file"))
    }
}

fn write_attr<T: H5Type>(file: &File, name: &str, value: &T) -> Result<(), LogError> {
    file.new_attr::<T>()
        .create(name)
        .and_then(|a| a.write_scalar(value))
        .map_err(LogError::hdf5(format!("writing attribute `{name}`")))
}

fn write_str_attr(file: &File, name: &str, value: &str) -> Result<(), LogError> {
    let text: VarLenUnicode = value.parse().map_err(|_| LogError::Attribute {
        name: "string",
        problem: format!("`{name}` contains a NUL character"),
    })?;
    write_attr(file, name, &text)
}

/// Where a log is written until it is complete: `NAME.partial` beside `NAME`.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = OsString::from(path.as_os_str());
    name.push(".partial");
    PathBuf::from(name)
}

/// A log written under a temporary name beside its own ([`partial_path`]) and renamed to its name by
/// [`PartialLog::finish`], so that a write that fails part-way leaves the file of that name, if any, as it
/// was. An unfinished one's temporary file is removed when it is dropped.
pub struct PartialLog {
    // Dropped in this order: the file is closed before it is removed.
    writer: LogWriter,
    temporary: Temporary,
    path: PathBuf,
}

/// A temporary file, removed when dropped unless it was renamed.
struct Temporary {
    path: PathBuf,
    renamed: bool,
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            // The temporary file is ours alone; one that cannot be removed stays under its temporary name.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl PartialLog {
    /// Creates (truncates) the temporary file of `path` and writes the root attributes.
    pub fn create(path: &Path, meta: &RunMeta) -> Result<PartialLog, LogError> {
        let temporary = Temporary {
            path: partial_path(path),
            renamed: false,
        };
        // On failure, `temporary` removes what was created.
        let writer = LogWriter::create(&temporary.path, meta)?;
        Ok(PartialLog {
            writer,
            temporary,
            path: path.to_owned(),
        })
    }

    /// The log's own name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Buffers one frame (see [`LogWriter::append`]).
    pub fn append(&mut self, frame: &Frame) -> Result<(), LogError> {
        self.writer.append(frame)
    }

    /// Completes the file and gives it its name (atomically replacing an older file of that name).
    pub fn finish(self) -> Result<(), LogError> {
        let PartialLog {
            writer,
            mut temporary,
            path,
        } = self;
        writer.finish()?;
        std::fs::rename(&temporary.path, &path).map_err(|error| LogError::Io {
            path: temporary.path.display().to_string(),
            error,
        })?;
        temporary.renamed = true;
        Ok(())
    }
}

/// Writes a whole run to `path`, through [`PartialLog`]: a run that cannot be written (a frame the reader
/// would refuse, a full disk) leaves an older file at `path` as it was and no temporary file.
pub fn write_log(path: &Path, log: &RunLog) -> Result<(), LogError> {
    let mut writer = PartialLog::create(path, &log.meta)?;
    for frame in &log.frames {
        writer.append(frame)?;
    }
    writer.finish()
}
