//! Value parsers shared by the commands' options, so that an option out of range is refused by the
//! command line, before any log is read, with the same words in every command.

/// The debounce lengths `calibrate` and `evaluate` offer by default, as the command line writes them
/// (the frames of [`crate::calibration::CalibrateOptions::default`]).
pub const DEFAULT_DEBOUNCE: &str = "1,2,3,5";

/// The `--debounce` option of `calibrate` and `evaluate`.
#[derive(clap::Args, Clone, Debug)]
pub struct Debounce {
    /// Debounce lengths offered (alarm when risk ≥ θ on this many consecutive frames), comma-separated.
    /// With more than one, the one kept is chosen on runs other than those θ is bounded on: `calibrate`'s
    /// `--select` runs (without them, the calibration runs with the confidence split between the
    /// options, so a higher θ), `evaluate`'s learning runs.
    #[arg(
        long = "debounce",
        value_delimiter = ',',
        default_value = DEFAULT_DEBOUNCE,
        value_name = "FRAMES,..."
    )]
    pub frames: Vec<u32>,
}

/// A rate in (0, 1), written as a percentage (`10%`) or a fraction (`0.1`).
///
/// # Errors
/// Text that is not a number, or a rate outside (0, 100 %).
pub fn rate(text: &str) -> Result<f64, String> {
    let (number, scale) = match text.trim().strip_suffix('%') {
        Some(p) => (p, 0.01),
        None => (text.trim(), 1.0),
    };
    let v: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a rate (write 10% or 0.1)"))?;
    let v = v * scale;
    if v > 0.0 && v < 1.0 {
        Ok(v)
    } else {
        Err(format!("rate {text} is outside (0, 100 %)"))
    }
}

/// An alarm threshold θ in (0, 1].
///
/// # Errors
/// Text that is not a number, or a θ outside (0, 1].
pub fn threshold(text: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a threshold (a number in (0, 1])"))?;
    if v > 0.0 && v <= 1.0 {
        Ok(v)
    } else {
        Err(format!("threshold {text} is outside (0, 1]"))
    }
}

#[cfg(test)]
mod tests {
    use super::{rate, threshold};

    #[test]
    fn rates_parse_as_percent_or_fraction() {
        assert_eq!(rate("10%"), Ok(0.1));
        assert_eq!(rate(" 0.25 "), Ok(0.25));
        for bad in ["0%", "0", "100%", "1", "150%", "ten", "nan", "-5%"] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_default_debounce_is_the_calibration_default() {
        let frames: Vec<u32> = super::DEFAULT_DEBOUNCE
            .split(',')
            .map(|f| f.parse().unwrap())
            .collect();
        assert_eq!(
            frames,
            crate::calibration::CalibrateOptions::default().debounce_frames
        );
    }

    #[test]
    fn thresholds_lie_in_the_half_open_unit_interval() {
        assert_eq!(threshold("1"), Ok(1.0));
        assert_eq!(threshold("0.3"), Ok(0.3));
        for bad in ["0", "-0.1", "1.01", "nan", "inf", "x"] {
            let err = threshold(bad).unwrap_err();
            assert!(err.contains(bad), "{bad}: {err}");
        }
    }
}
