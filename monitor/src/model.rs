//! The model file: every property of a deployment plus the law texts it was learned with.
//!
//! Layout: 16 magic bytes `AVGUARD-MODEL\0\0\0`, a little-endian `u32` format version, then the postcard
//! encoding of the body. Decoding checks magic and version first (so a foreign or future file is named as
//! such), then every matrix and table passes the same validator as when it was built.

use laws::perception::RoadUserCorrection;
use laws::LawSource;
use serde::{Deserialize, Serialize};

use crate::abstraction::{Compiled, PropertyDef};
use crate::calibrate::{Calibration, RssTuning};
use crate::error::ModelError;
use crate::forest::{BaggedPart, ForestShare, LegacyForest};
use crate::property::PropertyModel;

#[cfg(test)]
mod tests;

/// Magic bytes at the start of every model file.
pub const MAGIC: &[u8; 16] = b"AVGUARD-MODEL\0\0\0";
/// The format version this build writes: from 9 on, the properties are followed by one optional forest
/// per property ([`crate::forest`]); from 10 on, the forests by one optional enforcement calibration per
/// property ([`crate::PropertyModel::enforcement`]); from 11 on, those by one optional RSS tuning per
/// property ([`crate::PropertyModel::rss_tuning`]); from 12 on, each forest says whether it is boosted
/// ([`crate::forest`]); from 13 on, the RSS tunings are followed by one optional bagged part per property,
/// which makes its boosted forest one of both kinds ([`crate::forest::BaggedPart`]); from 14 on, those by
/// the model's perception latency, one `f64`; from 15 on, that by the model's road-user smoothing window,
/// one `f64`; from 16 on, that by whether velocities are smoothed too, one `bool` (all three
/// [`crate::BuildConfig::road_users`]).
pub const FORMAT_VERSION: u32 = 16;
/// The oldest format version this build reads: version 15 differs from 16 only in that it has no
/// velocity flag at its end (velocities not smoothed), version 14 from 15 only in that it has no
/// smoothing window at its end (road users not smoothed), version 13 from 14 only in that it has no
/// perception latency at its end (road users as logged, 0 s), version 12 from 13 only in that it has no bagged
/// parts after the RSS tunings (every forest is of one kind), version 11 from 12 only in that its forests carry
/// no boost field (every one is bagged), version 10 from 11 only in that it has no RSS
/// tunings after the enforcement calibrations, version 9 from 10 only in that it has no enforcement
/// calibrations after the forests, version 8 from 9 only in that it has no forests after the
/// properties, and version 7 from 8 only in that its predicates are never conjunctions, so their files
/// read as they are (without forests, enforcement calibrations or RSS tunings).
pub const OLDEST_READ_VERSION: u32 = 7;

/// The first format version whose files carry forests.
const FIRST_FOREST_VERSION: u32 = 9;
/// The first format version whose files carry enforcement calibrations.
const FIRST_ENFORCEMENT_VERSION: u32 = 10;
/// The first format version whose files carry RSS tunings.
const FIRST_RSS_TUNING_VERSION: u32 = 11;
/// The first format version whose forests may be boosted.
const FIRST_BOOST_VERSION: u32 = 12;
/// The first format version whose forests may be of both kinds.
const FIRST_BOTH_VERSION: u32 = 13;
/// The first format version whose files carry a perception latency.
const FIRST_LATENCY_VERSION: u32 = 14;
/// The first format version whose files carry a road-user smoothing window.
const FIRST_SMOOTHING_VERSION: u32 = 15;
/// The first format version whose files say whether road users' velocities are smoothed.
const FIRST_VELOCITY_SMOOTHING_VERSION: u32 = 16;
/// The largest perception latency a model may carry, s: the largest lag the estimate tries
/// ([`laws::geometry::latency::MAX_LAG_S`]).
pub const MAX_PERCEPTION_LATENCY_S: f64 = laws::geometry::latency::MAX_LAG_S;

/// All learned properties of a deployment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Model {
    /// The law files' names (e.g. `law38.law`) and texts, embedded so the model is self-contained.
    #[serde(with = "stored_laws")]
    laws: Vec<LawSource>,
    properties: Vec<PropertyModel>,
}

impl Model {
    /// Assembles a model, checking that the runtime can use it: distinct property names, one frame period
    /// and violation window for all, law texts that parse, and every property's law and predicates
    /// resolvable against them (see [`Compiled::new`]).
    ///
    /// # Errors
    /// [`ModelError::Property`] or [`ModelError::Config`] naming the first problem.
    pub fn try_new(
        laws: Vec<LawSource>,
        properties: Vec<PropertyModel>,
    ) -> Result<Model, ModelError> {
        for (i, p) in properties.iter().enumerate() {
            if let Some(reason) = crate::spec::property_name_problem(p.name()) {
                return Err(ModelError::Property {
                    property: p.name().chars().take(40).collect(),
                    reason,
                });
            }
            if properties[..i].iter().any(|q| q.name() == p.name()) {
                return Err(ModelError::Property {
                    property: p.name().to_string(),
                    reason: "defined twice".into(),
                });
            }
            let (a, b) = (p.config(), properties[0].config());
            if a.frame_period_s != b.frame_period_s || a.window_frames != b.window_frames {
                return Err(ModelError::Property {
                    property: p.name().to_string(),
                    reason: "frame period or violation window differs from the first property's"
                        .into(),
                });
            }
            if let Some(reason) = a.road_users.out_of_range() {
                return Err(ModelError::Property {
                    property: p.name().to_string(),
                    reason,
                });
            }
            if a.road_users != b.road_users {
                return Err(ModelError::Property {
                    property: p.name().to_string(),
                    reason: "perception latency or road-user smoothing differs from the first \
                             property's"
                        .into(),
                });
            }
        }
        let m = Model { laws, properties };
        m.compile()?;
        Ok(m)
    }

    /// This model with each property's reactive rule replaced by `rule(property)` (its DTMC, table and
    /// calibration unchanged): how `avguard evaluate` scores further comparator rules over the same runs.
    ///
    /// # Errors
    /// A rule whose literals do not resolve against the model's laws (see [`Model::try_new`]).
    pub fn with_reactive_rules(
        &self,
        rule: impl Fn(&PropertyModel) -> Option<crate::provenance::ReactiveRule>,
    ) -> Result<Model, ModelError> {
        let properties = self
            .properties
            .iter()
            .map(|p| p.clone().with_reactive_rule(rule(p)))
            .collect();
        Model::try_new(self.laws.clone(), properties)
    }

    /// The laws and encoders of every property, ready to evaluate frames: one encoder per property, in
    /// order, then one per ensemble member, property by property (see [`PropertyModel::members`]).
    ///
    /// # Errors
    /// See [`Compiled::new`]; never for a model that passed [`Model::try_new`].
    pub fn compile(&self) -> Result<Compiled, ModelError> {
        // Members carry no rule and no forest: the property's own chain does.
        fn def(p: &PropertyModel, rule: bool) -> PropertyDef<'_> {
            PropertyDef {
                name: p.name(),
                law: p.law(),
                predicates: p.predicates(),
                unsafe_bit: p.unsafe_bit(),
                reactive_rule: p
                    .reactive_rule()
                    .filter(|_| rule)
                    .map_or(&[][..], |r| &r.literals[..]),
                forest: p.forest().filter(|_| rule),
            }
        }
        let defs: Vec<PropertyDef<'_>> = self
            .properties
            .iter()
            .map(|p| def(p, true))
            .chain(
                self.properties
                    .iter()
                    .flat_map(|p| p.members().iter().map(|m| def(m, false))),
            )
            .collect();
        Ok(Compiled::new(
            &self.laws,
            &defs,
            self.frame_period_s(),
            self.window_frames(),
        )?
        .with_road_users(self.road_users()))
    }

    /// How this model reads every frame's road users before its signals are computed: smoothed over
    /// their recent reports, then moved ahead by the latency of the logs it was learned from (the first
    /// property's; all agree; see [`crate::BuildConfig::road_users`]). As logged for a model without
    /// properties, and for one learned from timely ground-truth logs.
    pub fn road_users(&self) -> RoadUserCorrection {
        self.properties
            .first()
            .map_or(RoadUserCorrection::NONE, |p| p.config().road_users)
    }

    /// How late the logs this model was learned from report road users, s ([`Model::road_users`]).
    pub fn perception_latency_s(&self) -> f64 {
        self.road_users().latency_s
    }

    /// Time between frames, s (the first property's; all agree). 0.1 s for a model without properties.
    pub fn frame_period_s(&self) -> f64 {
        self.properties
            .first()
            .map_or(0.1, |p| p.config().frame_period_s)
    }

    /// Length of the window predicates, frames. 100 for a model without properties.
    pub fn window_frames(&self) -> usize {
        self.properties
            .first()
            .map_or(100, |p| p.config().window_frames)
    }

    /// The properties, in definition order.
    pub fn properties(&self) -> &[PropertyModel] {
        &self.properties
    }

    /// The property called `name`.
    pub fn property(&self, name: &str) -> Option<&PropertyModel> {
        self.properties.iter().find(|p| p.name() == name)
    }

    /// Stores a calibrated threshold for property `name` (replacing any earlier one).
    ///
    /// # Errors
    /// [`ModelError::Property`] for an unknown property; a malformed calibration (see
    /// [`PropertyModel::with_calibration`]).
    pub fn set_calibration(
        &mut self,
        name: &str,
        calibration: Calibration,
    ) -> Result<(), ModelError> {
        let i = self.index_of(name)?;
        let p = self.properties[i].clone().with_calibration(calibration)?;
        self.properties[i] = p;
        Ok(())
    }

    /// Stores the threshold the interventions of collision property `name` use (replacing any earlier
    /// one; `None`: the alarm calibration's).
    ///
    /// # Errors
    /// [`ModelError::Property`] for an unknown property; a malformed calibration or a property that is
    /// not a collision property (see [`PropertyModel::with_enforcement`]).
    pub fn set_enforcement(
        &mut self,
        name: &str,
        enforcement: Option<Calibration>,
    ) -> Result<(), ModelError> {
        let i = self.index_of(name)?;
        let p = self.properties[i].clone().with_enforcement(enforcement)?;
        self.properties[i] = p;
        Ok(())
    }

    /// Stores RSS tuned to collision property `name`'s false-alarm target (replacing any earlier tuning;
    /// `None`: none).
    ///
    /// # Errors
    /// [`ModelError::Property`] for an unknown property; a malformed tuning or a property that is not a
    /// collision property (see [`PropertyModel::with_rss_tuning`]).
    pub fn set_rss_tuning(
        &mut self,
        name: &str,
        tuning: Option<RssTuning>,
    ) -> Result<(), ModelError> {
        let i = self.index_of(name)?;
        let p = self.properties[i].clone().with_rss_tuning(tuning)?;
        self.properties[i] = p;
        Ok(())
    }

    /// The index of property `name`.
    fn index_of(&self, name: &str) -> Result<usize, ModelError> {
        self.properties
            .iter()
            .position(|p| p.name() == name)
            .ok_or_else(|| ModelError::Property {
                property: name.to_string(),
                reason: "no such property in the model".into(),
            })
    }

    /// The embedded law texts.
    pub fn laws(&self) -> &[LawSource] {
        &self.laws
    }

    /// Whether some chain's risk mixes in a frame share (weight above 0), so that the risk the monitor
    /// reports is not the chains' P(F unsafe) alone.
    pub fn mixes_frame_share(&self) -> bool {
        self.properties
            .iter()
            .flat_map(PropertyModel::chains)
            .any(|c| c.frame_share().is_some_and(|f| f.weight() > 0.0))
    }

    /// Whether some property's risk mixes in a forest ([`crate::forest`]; weight above 0), so that the
    /// risk the monitor reports (but its PAC bound) is not the chains' alone.
    pub fn mixes_forest(&self) -> bool {
        self.properties
            .iter()
            .any(|p| p.forest().is_some_and(|f| f.weight() > 0.0))
    }

    /// Serialises the model (magic, version, body).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        // Serialising plain data into a Vec cannot fail: postcard errors only on writer failure or
        // unsupported types (maps with non-string keys are not among ours, sequences have known length).
        let forests: Vec<Option<&ForestShare>> =
            self.properties.iter().map(PropertyModel::forest).collect();
        let enforcements: Vec<Option<&Calibration>> = self
            .properties
            .iter()
            .map(PropertyModel::enforcement)
            .collect();
        let rss_tunings: Vec<Option<&RssTuning>> = self
            .properties
            .iter()
            .map(PropertyModel::rss_tuning)
            .collect();
        let bagged_parts: Vec<Option<BaggedPart>> = forests
            .iter()
            .map(|f| f.and_then(ForestShare::bagged_part))
            .collect();
        match postcard::to_extend(self, out)
            .and_then(|out| postcard::to_extend(&forests, out))
            .and_then(|out| postcard::to_extend(&enforcements, out))
            .and_then(|out| postcard::to_extend(&rss_tunings, out))
            .and_then(|out| postcard::to_extend(&bagged_parts, out))
            .and_then(|out| postcard::to_extend(&self.road_users().latency_s, out))
            .and_then(|out| postcard::to_extend(&self.road_users().smoothing_s, out))
            .and_then(|out| postcard::to_extend(&self.road_users().smooth_velocities, out))
        {
            Ok(v) => v,
            Err(e) => unreachable!("postcard into a Vec cannot fail: {e}"),
        }
    }

    /// Decodes and validates a model.
    ///
    /// # Errors
    /// [`ModelError::NotAModel`] for foreign bytes, [`ModelError::Version`] for another format version,
    /// [`ModelError::Decode`] for truncated or corrupt contents (including failed validation).
    pub fn from_bytes(bytes: &[u8]) -> Result<Model, ModelError> {
        let rest = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or(ModelError::NotAModel)?;
        let (version, body) = rest.split_first_chunk::<4>().ok_or(ModelError::NotAModel)?;
        let version = u32::from_le_bytes(*version);
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(ModelError::Version {
                found: version,
                oldest: OLDEST_READ_VERSION,
                supported: FORMAT_VERSION,
            });
        }
        // postcard's errors say how the bytes failed, not which part of the file they belong to.
        let decode_part = |what: &'static str| {
            move |e: postcard::Error| ModelError::Decode(format!("{what}: {e}"))
        };
        let (mut model, mut tail): (Model, &[u8]) = postcard::take_from_bytes(body)
            .map_err(decode_part("the laws and properties do not decode"))?;
        if version >= FIRST_BOOST_VERSION {
            (model.properties, tail) = attach_part(
                model.properties,
                tail,
                "forests",
                |p, f: Option<ForestShare>| Ok(p.with_forest(f)),
            )?;
        } else if version >= FIRST_FOREST_VERSION {
            (model.properties, tail) = attach_part(
                model.properties,
                tail,
                "forests",
                |p, f: Option<LegacyForest>| Ok(p.with_forest(f.map(|f| f.0))),
            )?;
        }
        if version >= FIRST_ENFORCEMENT_VERSION {
            (model.properties, tail) = attach_part(
                model.properties,
                tail,
                "enforcement calibrations",
                |p, e: Option<Calibration>| p.with_enforcement(e),
            )?;
        }
        if version >= FIRST_RSS_TUNING_VERSION {
            (model.properties, tail) = attach_part(
                model.properties,
                tail,
                "RSS tunings",
                |p, t: Option<RssTuning>| p.with_rss_tuning(t),
            )?;
        }
        if version >= FIRST_BOTH_VERSION {
            (model.properties, tail) = attach_part(
                model.properties,
                tail,
                "forests' bagged parts",
                |p, b: Option<BaggedPart>| {
                    let Some(b) = b else {
                        return Ok(p);
                    };
                    let Some(f) = p.forest().cloned() else {
                        return Err(ModelError::Decode(format!(
                            "property {}: a forest's bagged part without a forest",
                            p.name()
                        )));
                    };
                    Ok(p.with_forest(Some(f.with_bagged_part(Some(b))?)))
                },
            )?;
        }
        let mut road_users = RoadUserCorrection::NONE;
        if version >= FIRST_LATENCY_VERSION {
            (road_users.latency_s, tail) = postcard::take_from_bytes(tail)
                .map_err(decode_part("the perception latency does not decode"))?;
        }
        if version >= FIRST_SMOOTHING_VERSION {
            (road_users.smoothing_s, tail) = postcard::take_from_bytes(tail)
                .map_err(decode_part("the road-user smoothing does not decode"))?;
        }
        if version >= FIRST_VELOCITY_SMOOTHING_VERSION {
            (road_users.smooth_velocities, tail) = postcard::take_from_bytes(tail)
                .map_err(decode_part("the velocity smoothing does not decode"))?;
        }
        if let Some(reason) = road_users.out_of_range() {
            return Err(ModelError::Decode(reason));
        }
        model.properties = model
            .properties
            .into_iter()
            .map(|p| p.with_road_users(road_users))
            .collect();
        if !tail.is_empty() {
            return Err(ModelError::Decode(format!("{} trailing bytes", tail.len())));
        }
        Model::try_new(model.laws, model.properties)
    }
}

/// Reads one part of a model file's tail — one optional `T` per property, called `what` in errors — from
/// `tail` and attaches each to its property with `attach`; returns the properties and the rest of the
/// tail.
///
/// # Errors
/// [`ModelError::Decode`]: a part that does not decode, one of another length than the properties, or one
/// `attach` refuses.
fn attach_part<'a, T: serde::de::DeserializeOwned>(
    properties: Vec<PropertyModel>,
    tail: &'a [u8],
    what: &str,
    attach: impl Fn(PropertyModel, Option<T>) -> Result<PropertyModel, ModelError>,
) -> Result<(Vec<PropertyModel>, &'a [u8]), ModelError> {
    let (parts, rest): (Vec<Option<T>>, &[u8]) = postcard::take_from_bytes(tail)
        .map_err(|e| ModelError::Decode(format!("the {what} do not decode: {e}")))?;
    if parts.len() != properties.len() {
        return Err(ModelError::Decode(format!(
            "{} {what} for {} properties",
            parts.len(),
            properties.len()
        )));
    }
    let properties = properties
        .into_iter()
        .zip(parts)
        .map(|(p, t)| attach(p, t))
        .collect::<Result<_, _>>()
        .map_err(|e| ModelError::Decode(e.to_string()))?;
    Ok((properties, rest))
}

/// The embedded laws as the file stores them: a sequence of (name, text). `laws` derives no serde (it
/// has no serialization); this is [`LawSource`]'s counterpart at the model-file boundary.
mod stored_laws {
    use laws::LawSource;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Borrowed<'a> {
        name: &'a str,
        text: &'a str,
    }

    #[derive(Deserialize)]
    struct Owned {
        name: String,
        text: String,
    }

    pub(super) fn serialize<S: Serializer>(laws: &[LawSource], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(laws.iter().map(|l| Borrowed {
            name: &l.name,
            text: &l.text,
        }))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<LawSource>, D::Error> {
        let stored = Vec::<Owned>::deserialize(d)?;
        Ok(stored
            .into_iter()
            .map(|l| LawSource {
                name: l.name,
                text: l.text,
            })
            .collect())
    }
}
