//! A run's frames as columns named like the log's datasets, for front ends that want a table (the
//! Python package's `read_log` makes pandas DataFrames of them). Walks the same column tables as the
//! writer and the reader, so the names and element types cannot drift from the file format.

use laws::Frame;

use super::schema::{Col, FRAME_COLUMNS, OBSTACLE_COLUMNS};

/// One column, in the element type its dataset has in the file.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// `f64` values.
    F64(Vec<f64>),
    /// `f32` values.
    F32(Vec<f32>),
    /// `i32` values.
    I32(Vec<i32>),
    /// `u8` values (flags are 0 or 1).
    U8(Vec<u8>),
}

/// The `/frames` table: one `(dataset name, values)` per dataset, in the file's column order.
pub fn frame_columns(frames: &[Frame]) -> Vec<(&'static str, Column)> {
    FRAME_COLUMNS
        .iter()
        .map(|col| (col.name(), column(col, frames.iter())))
        .collect()
}

/// The `/obstacles` table, one row per obstacle per frame: `frame` (the frame's index) and `t` (its
/// time) first, then one column per dataset of the file.
pub fn obstacle_columns(frames: &[Frame]) -> Vec<(&'static str, Column)> {
    let rows = || {
        frames
            .iter()
            .enumerate()
            .flat_map(|(i, f)| f.obstacles.iter().map(move |o| (i, f.t, o)))
    };
    let mut columns = vec![
        (
            "frame",
            Column::I32(
                rows()
                    .map(|(i, ..)| i32::try_from(i).unwrap_or(i32::MAX))
                    .collect(),
            ),
        ),
        ("t", Column::F64(rows().map(|(_, t, _)| t).collect())),
    ];
    columns.extend(
        OBSTACLE_COLUMNS
            .iter()
            .map(|col| (col.name(), column(col, rows().map(|(.., o)| o)))),
    );
    columns
}

fn column<'a, T: 'a>(col: &Col<T>, rows: impl Iterator<Item = &'a T>) -> Column {
    match col {
        Col::F64(_, _, get, _) => Column::F64(rows.map(get).collect()),
        Col::F32(_, _, get, _) => Column::F32(rows.map(get).collect()),
        Col::I32(_, _, get, _) => Column::I32(rows.map(get).collect()),
        Col::U8(_, _, get, _) => Column::U8(rows.map(get).collect()),
    }
}
