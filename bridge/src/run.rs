//! Runs on one connection: a connection carries one or more runs, each with its own monitor session, law
//! windows, enforcement episode, prediction-log run id and recording file (INTERFACES §3).
//!
//! A run starts with the connection; a new one starts when the assembler sees message time go back or
//! jump ahead (`ingest::assemble::RunBoundary`), and when the client publishes
//! `{"op": "new_run", "run_id": ...}` on `/avguard/control`.

/// The name of one run of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunName {
    /// 1 for a connection's first run, then 2, 3, ...
    pub index: u32,
    /// The run id: the client's `run_id` when it gave one, else `conn<k>` for the first run of connection
    /// k and `conn<k>_run<i>` for its run i ≥ 2.
    pub id: String,
    /// True when the client chose the id.
    pub explicit: bool,
}

impl RunName {
    /// The first run of connection `conn`.
    pub fn first(conn: u64) -> RunName {
        RunName {
            index: 1,
            id: format!("conn{conn}"),
            explicit: false,
        }
    }

    /// The run after this one, with the client's id when given.
    pub fn next(&self, conn: u64, run_id: Option<String>) -> RunName {
        let index = self.index.saturating_add(1);
        match run_id {
            Some(id) => RunName {
                index,
                id,
                explicit: true,
            },
            None => RunName {
                index,
                id: format!("conn{conn}_run{index}"),
                explicit: false,
            },
        }
    }

    /// A file-name-safe form of the id: ASCII letters, digits, `-`, `_` and `.` kept, anything else `_`,
    /// at most 64 characters.
    pub fn file_stem(&self) -> String {
        self.id
            .chars()
            .take(64)
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_named_by_connection_and_index_unless_the_client_names_them() {
        let first = RunName::first(3);
        assert_eq!(first.id, "conn3");
        let second = first.next(3, None);
        assert_eq!((second.index, second.id.as_str()), (2, "conn3_run2"));
        let third = second.next(3, Some("scenario 7/seed 2".into()));
        assert_eq!(third.index, 3);
        assert!(third.explicit);
        assert_eq!(third.file_stem(), "scenario_7_seed_2");
    }
}
