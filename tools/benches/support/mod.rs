//! What the `score` and `select` benches share: the repository's scenario files and the shipped laws and
//! properties, read the way `avguard learn --laws laws/specs` reads them.

use std::path::PathBuf;

use laws::LawSource;
use monitor::spec::PropertySpec;
use scenarios::Scenario;

/// The repository root (the benches run from `tools/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The scenarios `scenarios/NAME.toml` of `names`, in order.
pub fn scenarios(names: &[&str]) -> Vec<Scenario> {
    names
        .iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(format!("scenarios/{name}.toml")))
                .expect("scenario file");
            Scenario::from_toml_str(&text).expect("scenario")
        })
        .collect()
}

/// The shipped law texts (`laws/specs/*.law`) and properties (`laws/specs/properties.toml`).
pub fn shipped_laws() -> (Vec<LawSource>, Vec<PropertySpec>) {
    let dir = root().join("laws/specs");
    let laws = tools::lawdir::read_sources(&dir).expect("laws");
    let specs = monitor::spec::parse_properties_toml(
        &std::fs::read_to_string(dir.join("properties.toml")).expect("properties.toml"),
    )
    .expect("properties");
    (laws, specs)
}
