//! `evaluate`: the held-out evaluation `avguard evaluate` runs, from Python. The options are the
//! command's flags, parsed by its own parser, so defaults, checks and messages are the command's; the
//! result is what the command prints and writes: the tables as text, `evaluate.json` as JSON text, and
//! the two models.

use std::path::PathBuf;

use clap::Parser;
use pyo3::prelude::*;
use tools::cmd::evaluate::Args;
use tools::evaluate::Evaluation;

use crate::model::Model;
use crate::to_py;

/// `avguard evaluate`'s arguments, for parsing them outside the binary.
#[derive(clap::Parser)]
#[command(name = "avguard evaluate", no_binary_name = true)]
struct EvaluateCommand {
    #[command(flatten)]
    args: Args,
}

/// The command line `avguard evaluate --laws LAWS [--properties FILE] --train TRAIN... --test TEST...
/// FLAGS...` (`("max_predicates", "8")` is `--max-predicates 8`), parsed as the command parses it.
fn parse(
    laws: PathBuf,
    properties: Option<PathBuf>,
    train: &[PathBuf],
    test: &[PathBuf],
    flags: &[(String, String)],
) -> anyhow::Result<Args> {
    let mut argv: Vec<String> = vec!["--laws".into(), laws.display().to_string()];
    if let Some(p) = properties {
        argv.extend(["--properties".into(), p.display().to_string()]);
    }
    // `--train=PATH` keeps a path that starts with `-` a path.
    argv.extend(train.iter().map(|p| format!("--train={}", p.display())));
    argv.extend(test.iter().map(|p| format!("--test={}", p.display())));
    for (name, value) in flags {
        let flag = format!("--{}", name.replace('_', "-"));
        // An empty value is a flag without one (`per_scenario=True` in Python).
        argv.push(if value.is_empty() {
            flag
        } else {
            format!("{flag}={value}")
        });
    }
    EvaluateCommand::try_parse_from(argv)
        .map(|c| c.args)
        .map_err(crate::flag_error)
}

/// What one evaluation gives Python: the printed tables, `evaluate.json`'s text, and the models as
/// `(mode, model)` (`fixed`, then `auto`).
type Evaluated = (String, String, Vec<(String, Model)>);

/// Runs one evaluation (`avguard evaluate` with these arguments and `--repeats 1`), releasing the GIL.
#[pyfunction]
#[pyo3(signature = (laws, properties, train, test, flags))]
pub(crate) fn evaluate(
    py: Python<'_>,
    laws: PathBuf,
    properties: Option<PathBuf>,
    train: Vec<PathBuf>,
    test: Vec<PathBuf>,
    flags: Vec<(String, String)>,
) -> PyResult<Evaluated> {
    py.detach(|| {
        let args = parse(laws, properties, &train, &test, &flags)?;
        let eval = tools::cmd::evaluate::evaluate_one(&args)?;
        Ok(evaluated(eval))
    })
    .map_err(to_py)
}

fn evaluated(eval: Evaluation) -> Evaluated {
    let text = eval.render();
    let json = eval.json().to_string();
    let models = eval
        .models
        .into_iter()
        .map(|r| (r.mode.as_str().to_owned(), Model::from(r.model)))
        .collect();
    (text, json, models)
}
