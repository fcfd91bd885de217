//! `avguard export --model M --property P --out DIR`: the learned DTMC of one property in PRISM's explicit
//! format (`P.tra`, `P.lab`) plus our cached table (`P.table.csv`), per INTERFACES §6.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::Context;
use monitor::{prism, PropertyModel};

/// Arguments of `avguard export`.
#[derive(clap::Args)]
pub struct Args {
    /// The model file.
    #[arg(long)]
    model: PathBuf,
    /// Name of the property to export.
    #[arg(long)]
    property: String,
    /// Output folder (created if missing).
    #[arg(long)]
    out: PathBuf,
}

/// Runs `avguard export`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let model = crate::modelfile::read(&args.model)?.model;
    let Some(p) = model.property(&args.property) else {
        let names: Vec<&str> = model.properties().iter().map(|p| p.name()).collect();
        anyhow::bail!(
            "no property {:?} in the model (it has: {})",
            args.property,
            names.join(", ")
        );
    };
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let name = p.name();
    write(&args.out.join(format!("{name}.tra")), p, prism::write_tra)?;
    write(&args.out.join(format!("{name}.lab")), p, prism::write_lab)?;
    write(
        &args.out.join(format!("{name}.table.csv")),
        p,
        prism::write_table_csv,
    )?;
    Ok(())
}

fn write(
    path: &Path,
    p: &PropertyModel,
    f: fn(&PropertyModel, BufWriter<File>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    f(p, BufWriter::new(file)).with_context(|| format!("cannot write {}", path.display()))
}
