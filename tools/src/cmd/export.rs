//! `avguard export --model M --property P --out DIR`: the learned DTMC of one property in PRISM's explicit
//! format (`P.tra`, `P.lab`) plus our cached table (`P.table.csv`), per INTERFACES §6; an ensemble's
//! further chains as `P.chainK.*`.

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
    // An ensemble's further chains follow as NAME.chainK (K from 2), each a DTMC of its own.
    for (k, chain) in p.chains().enumerate() {
        let name = match k {
            0 => p.name().to_owned(),
            k => format!("{}.chain{}", p.name(), k + 1),
        };
        write(
            &args.out.join(format!("{name}.tra")),
            chain,
            prism::write_tra,
        )?;
        write(
            &args.out.join(format!("{name}.lab")),
            chain,
            prism::write_lab,
        )?;
        write(
            &args.out.join(format!("{name}.table.csv")),
            chain,
            prism::write_table_csv,
        )?;
    }
    Ok(())
}

/// Writes one file whole or not at all ([`crate::whole_file`]): a full disk leaves no truncated file
/// under the name a model checker would read.
fn write(
    path: &Path,
    p: &PropertyModel,
    f: fn(&PropertyModel, BufWriter<File>) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    crate::whole_file::write_whole(path, ".avguard-export-", |file| f(p, BufWriter::new(file)))
}
