//! The RSS comparator's parameters as command-line options (`score`, `evaluate`), CARLA's RSS sensor
//! defaults unless given (see `laws::rss`).

use laws::rss::RssParams;

/// RSS options shared by the commands that report RSS as a comparator.
#[derive(Debug, Clone, Copy, PartialEq, clap::Args)]
pub struct RssOptions {
    /// RSS: the ego's response time ρ, s.
    #[arg(long, default_value_t = RssParams::CARLA.ego.response_time_s, value_name = "S")]
    pub rss_ego_response_s: f64,
    /// RSS: other vehicles' response time ρ, s.
    #[arg(long, default_value_t = RssParams::CARLA.other_vehicle.response_time_s, value_name = "S")]
    pub rss_other_response_s: f64,
    /// RSS: the ego's largest acceleration during its response time, m/s².
    #[arg(long, default_value_t = RssParams::CARLA.ego.accel_max_lon_mps2, value_name = "M/S2")]
    pub rss_accel_max: f64,
    /// RSS: the least braking the ego applies after its response time, m/s².
    #[arg(long, default_value_t = RssParams::CARLA.ego.brake_min_lon_mps2, value_name = "M/S2")]
    pub rss_brake_min: f64,
    /// RSS: the hardest braking a vehicle in front may apply, m/s².
    #[arg(long, default_value_t = RssParams::CARLA.other_vehicle.brake_max_lon_mps2, value_name = "M/S2")]
    pub rss_brake_max: f64,
}

impl Default for RssOptions {
    fn default() -> Self {
        let c = RssParams::CARLA;
        RssOptions {
            rss_ego_response_s: c.ego.response_time_s,
            rss_other_response_s: c.other_vehicle.response_time_s,
            rss_accel_max: c.ego.accel_max_lon_mps2,
            rss_brake_min: c.ego.brake_min_lon_mps2,
            rss_brake_max: c.other_vehicle.brake_max_lon_mps2,
        }
    }
}

impl RssOptions {
    /// The parameters: CARLA's with these overrides.
    ///
    /// # Errors
    /// A time or acceleration that is negative or not finite, or a zero braking.
    pub fn params(&self) -> anyhow::Result<RssParams> {
        for (name, v) in [
            ("--rss-ego-response-s", self.rss_ego_response_s),
            ("--rss-other-response-s", self.rss_other_response_s),
            ("--rss-accel-max", self.rss_accel_max),
        ] {
            anyhow::ensure!(
                v.is_finite() && v >= 0.0,
                "{name} must be a finite number >= 0"
            );
        }
        for (name, v) in [
            ("--rss-brake-min", self.rss_brake_min),
            ("--rss-brake-max", self.rss_brake_max),
        ] {
            anyhow::ensure!(v.is_finite() && v > 0.0, "{name} must be a positive number");
        }
        let mut p = RssParams::CARLA;
        p.ego.response_time_s = self.rss_ego_response_s;
        p.ego.accel_max_lon_mps2 = self.rss_accel_max;
        p.ego.brake_min_lon_mps2 = self.rss_brake_min;
        p.ego.brake_min_correct_lon_mps2 = p.ego.brake_min_correct_lon_mps2.min(self.rss_brake_min);
        p.other_vehicle.response_time_s = self.rss_other_response_s;
        p.other_vehicle.brake_max_lon_mps2 = self.rss_brake_max;
        Ok(p)
    }

    /// The parameters in words, for reports and the score cache key.
    pub fn describe(&self) -> String {
        format!(
            "ρ ego {} s, ρ others {} s, a_max {} m/s², b_min {} m/s², b_max {} m/s²",
            self.rss_ego_response_s,
            self.rss_other_response_s,
            self.rss_accel_max,
            self.rss_brake_min,
            self.rss_brake_max
        )
    }
}
