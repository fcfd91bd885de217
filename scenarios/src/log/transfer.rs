//! A validated run as bytes, for handing it from the process that read the HDF5 file to the one that
//! uses it (see [`super::isolated`]). Not a file format: both ends are the same build.
//!
//! Layout (little-endian): the magic `AVGLOGT1`, the metadata (`scenario` and `run_id` as a `u32` length
//! and UTF-8 bytes, `frame_period_s` as `f64`, `seed` as a `u8` flag and a `u64`), the frame count (`u64`),
//! then per frame every `/frames` column of the log schema in its element type, the obstacle count (`u32`)
//! and per obstacle every `/obstacles` column. Walking the schema's column tables, it carries exactly
//! what the reader fills, so a run survives the trip unchanged (NaN payloads included).

use laws::{Frame, Obstacle};

use super::schema::{Col, BLANK_OBSTACLE, FRAME_COLUMNS, OBSTACLE_COLUMNS};
use super::{RunLog, RunMeta};

const MAGIC: &[u8; 8] = b"AVGLOGT1";

/// `run` as bytes.
pub fn encode(run: &RunLog) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + run.frames.len() * 256);
    out.extend_from_slice(MAGIC);
    put_str(&mut out, &run.meta.scenario);
    put_str(&mut out, &run.meta.run_id);
    out.extend_from_slice(&run.meta.frame_period_s.to_le_bytes());
    out.push(u8::from(run.meta.seed.is_some()));
    out.extend_from_slice(&run.meta.seed.unwrap_or(0).to_le_bytes());
    out.extend_from_slice(&(run.frames.len() as u64).to_le_bytes());
    for frame in &run.frames {
        for col in FRAME_COLUMNS {
            put_col(&mut out, col, frame);
        }
        let n = u32::try_from(frame.obstacles.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&n.to_le_bytes());
        for obstacle in frame.obstacles.iter().take(n as usize) {
            for col in OBSTACLE_COLUMNS {
                put_col(&mut out, col, obstacle);
            }
        }
    }
    out
}

/// The run encoded in `bytes`; the error says where the bytes stop making sense.
pub fn decode(bytes: &[u8]) -> Result<RunLog, String> {
    let mut r = Bytes { rest: bytes };
    if r.take(MAGIC.len())? != MAGIC {
        return Err("not a transferred run (wrong magic)".to_owned());
    }
    let scenario = r.string()?;
    let run_id = r.string()?;
    let frame_period_s = f64::from_le_bytes(r.array()?);
    let has_seed = r.array::<1>()?[0] != 0;
    let seed = u64::from_le_bytes(r.array()?);
    let n_frames = u64::from_le_bytes(r.array()?);
    // Each frame takes at least its columns and the obstacle count: checked before allocating.
    let min_frame = row_bytes(FRAME_COLUMNS) + 4;
    if n_frames > (r.rest.len() / min_frame) as u64 {
        return Err(format!(
            "{n_frames} frames cannot fit in {} bytes",
            r.rest.len()
        ));
    }
    let mut frames = Vec::with_capacity(n_frames as usize);
    for _ in 0..n_frames {
        let mut frame = Frame::default();
        for col in FRAME_COLUMNS {
            r.get_col(col, &mut frame)?;
        }
        let n_obstacles = u32::from_le_bytes(r.array()?) as usize;
        if n_obstacles > r.rest.len() / row_bytes(OBSTACLE_COLUMNS) {
            return Err(format!(
                "{n_obstacles} obstacles cannot fit in {} bytes",
                r.rest.len()
            ));
        }
        frame.obstacles = (0..n_obstacles)
            .map(|_| {
                let mut o: Obstacle = BLANK_OBSTACLE;
                for col in OBSTACLE_COLUMNS {
                    r.get_col(col, &mut o)?;
                }
                Ok(o)
            })
            .collect::<Result<_, String>>()?;
        frames.push(frame);
    }
    if !r.rest.is_empty() {
        return Err(format!("{} bytes after the last frame", r.rest.len()));
    }
    Ok(RunLog {
        meta: RunMeta {
            scenario,
            run_id,
            frame_period_s,
            seed: has_seed.then_some(seed),
        },
        frames,
    })
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    let n = u32::try_from(s.len()).unwrap_or(u32::MAX);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(s.as_bytes().get(..n as usize).unwrap_or_default());
}

fn put_col<T>(out: &mut Vec<u8>, col: &Col<T>, row: &T) {
    match col {
        Col::F64(_, _, get, _) => out.extend_from_slice(&get(row).to_le_bytes()),
        Col::F32(_, _, get, _) => out.extend_from_slice(&get(row).to_le_bytes()),
        Col::I32(_, _, get, _) => out.extend_from_slice(&get(row).to_le_bytes()),
        Col::U8(_, _, get, _) => out.push(get(row)),
    }
}

/// Bytes one row of `cols` takes.
fn row_bytes<T>(cols: &[Col<T>]) -> usize {
    cols.iter()
        .map(|c| match c {
            Col::F64(..) => 8,
            Col::F32(..) | Col::I32(..) => 4,
            Col::U8(..) => 1,
        })
        .sum()
}

/// The bytes not read yet.
struct Bytes<'a> {
    rest: &'a [u8],
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.rest.len() {
            return Err(format!(
                "ends early: {n} bytes needed, {} left",
                self.rest.len()
            ));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn string(&mut self) -> Result<String, String> {
        let n = u32::from_le_bytes(self.array()?) as usize;
        let bytes = self.take(n)?;
        String::from_utf8(bytes.to_vec()).map_err(|e| format!("a string is not UTF-8: {e}"))
    }

    fn get_col<T>(&mut self, col: &Col<T>, row: &mut T) -> Result<(), String> {
        match col {
            Col::F64(_, _, _, set) => set(row, f64::from_le_bytes(self.array()?)),
            Col::F32(_, _, _, set) => set(row, f32::from_le_bytes(self.array()?)),
            Col::I32(_, _, _, set) => set(row, i32::from_le_bytes(self.array()?)),
            Col::U8(_, _, _, set) => set(row, self.array::<1>()?[0]),
        }
        Ok(())
    }
}
