//! `gimc fit`: multi-label / multi-class GIMC and IMC fits with model selection on a
//! validation split (gimc::select_and_fit), saved as a versioned model file (MODEL_FORMAT.md).
//! Dense features are standardised with the training statistics first (`--standardize`), rows
//! are then normalised on request (`--normalize l2`), and both are stored in the model for
//! `gimc predict`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gimc::{
    Gamma, IterationInfo, Precision, SelectionParams, Storage, Task, estimate_selection,
    select_and_fit_observed,
};
use gimc_linalg::{Preprocess, RowNorm};
use serde_json::json;

use crate::common::{
    Globals, Normalize, Standardize, check_outputs, label_data, load_target, map_method,
    memory_budget, normalize, preflight, standardize, write_output,
};
use crate::progress::FitProgress;

/// Arguments of `gimc fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// Training data (ignored with --triplets): a file (ARFF / Mulan pair, LIBSVM, XMC, CSV with --label-column) or a set
    /// name in the data directory (its `train` part unless --part).
    #[arg(required_unless_present = "triplets")]
    pub target: Option<String>,
    /// Part of a named set to train on.
    #[arg(long, default_value = "train")]
    pub part: String,
    /// Method: `auto` (default) searches the row transform, γ, λ, the maps (lff, lnys and
    /// their union) and a linear part on the validation split, learning the maps of the best
    /// setting; --gamma, --lambda, --m, --iters, --normalize and --families narrow its search.
    /// gimc-NAME learns a map of the family NAME, imc-NAME keeps its random draw.
    /// Built-in families: lff (random Fourier), lff-phase (random-phase Fourier √(2/D)
    /// cos(XU + b), D = 2m directions), lnys (Nyström, M = I), nys-whiten and nys-kmeans
    /// (Nyström with whitening, uniform or k-means landmarks); a binary built on gimc_cli adds
    /// its own. imc-rff, imc-rff-phase and imc-nys are the paper's names of imc-lff,
    /// imc-lff-phase and imc-lnys.
    #[arg(long, default_value = "auto")]
    pub method: String,
    /// Map families `auto` searches (comma list of registry names; default lff,lnys).
    #[arg(long, value_delimiter = ',')]
    pub families: Vec<String>,
    /// Number of random features / landmarks m (comma list = grid searched on validation;
    /// default 500; `auto` takes one value).
    #[arg(long, value_delimiter = ',')]
    pub m: Vec<usize>,
    /// RBF width γ (comma list = grid): a number, `scale` = 1 / (d · Var X) on the features as
    /// the map sees them (after --standardize and --normalize; scikit-learn's rule), or
    /// `F*scale`. The γ used is stored in the model. Default: `scale`; `auto` searches
    /// 0.0625*scale, 0.25*scale and scale.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub gamma: Vec<Gamma>,
    /// Ridge penalty λ (comma list = grid). Default 1; `auto` searches 0.001, 0.01, 0.1, 1 and 10,
    /// each block's penalty scaled by its mean squared row norm.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub lambda: Vec<f64>,
    /// Maximum outer iterations of the map learning (chosen on validation, ≤ this).
    #[arg(long, default_value_t = 10)]
    pub iters: usize,
    /// Stop each setting's map learning once its validation score has not beaten its best for
    /// this many outer iterations (≥ 1); default: run every setting to --iters.
    #[arg(long, value_name = "N")]
    pub patience: Option<usize>,
    /// Step control of the map learning: cap every update of the map's parameters U at this
    /// fraction ρ of ‖U‖_F (e.g. 0.1); default: only the first step is capped, at ρ = 1.
    #[arg(long, value_name = "RHO", allow_negative_numbers = true)]
    pub max_step: Option<f64>,
    /// Weight μ of a proximal term μ·f₀·‖U − U₀‖²/‖U₀‖² keeping the learned map near its random
    /// start U₀ (f₀: the objective at the start); 0 = none.
    #[arg(
        long,
        value_name = "MU",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub proximal: f64,
    /// Fraction of the training rows held out for model selection.
    #[arg(long, default_value_t = 0.2)]
    pub validation: f64,
    /// The k of the validation P@k that chooses the setting (multi-label). Default 1; `auto`
    /// decides by the mean of P@1 and P@3 unless this is given.
    #[arg(long)]
    pub select_k: Option<usize>,
    /// Where to save the model (safetensors + JSON header, see MODEL_FORMAT.md).
    #[arg(long, short = 'o', default_value = "model.gimc")]
    pub out: PathBuf,
    /// General completion: observed entries `i j value` (0-based rows of --row-features,
    /// columns = rows of --col-features); TARGET is then ignored.
    #[arg(long, value_name = "FILE", requires_all = ["row_features", "col_features"])]
    pub triplets: Option<PathBuf>,
    /// Row features of a completion fit (file or set name).
    #[arg(long, value_name = "DATA")]
    pub row_features: Option<String>,
    /// Column features of a completion fit (file or set name).
    #[arg(long, value_name = "DATA")]
    pub col_features: Option<String>,
    /// Rank of a completion fit.
    #[arg(long, default_value_t = 10)]
    pub rank: usize,
    /// Write the per-iteration trace of the final fit (CSV, or JSON when the name ends .json).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Standardise the feature columns with the training mean and standard deviation (stored
    /// in the model and applied by `gimc predict`): auto = for dense features only.
    #[arg(long, value_enum, default_value_t = Standardize::Auto)]
    pub standardize: Standardize,
    /// Normalise every row to unit norm after any standardisation (stored in the model and
    /// applied by `gimc predict`). Default none; `auto` searches raw, l2 and tf-idf + l2 rows
    /// unless this is given.
    #[arg(long, value_enum)]
    pub normalize: Option<Normalize>,
    /// Hold the features Φ (rows × D) whole, or stream them in row blocks so that Φ is never
    /// held (memory O(D² + D·L + block·D) besides the data; one more feature pass per
    /// iteration). auto: stream only when the whole Φ would not fit the memory available.
    #[arg(long, value_enum, default_value_t = Stream::Auto)]
    pub stream: Stream,
    /// Rows per streamed block (0: about 8 Mi entries of Φ per block).
    #[arg(long, default_value_t = 0, value_name = "ROWS")]
    pub block_rows: usize,
    /// Arithmetic of the streamed block products: f64, or f32 (twice the GEMM rate; the sums
    /// over blocks, the W-step and the line search stay f64). f32 implies streaming.
    #[arg(long, default_value = "f64", value_name = "f64|f32")]
    pub precision: Precision,
    /// Run as one process of a data-parallel fit under `mpirun` (one setting, --iters
    /// iterations, no validation split; process 0 writes the model). Each process reads its
    /// shard of an XC-format file, or the file with `{rank}` replaced by its rank.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
}

/// `gimc fit --stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Stream {
    /// Stream only when the whole Φ would not fit.
    Auto,
    /// Always stream.
    On,
    /// Never stream (a fit that does not fit is refused).
    Off,
}

/// Runs `gimc fit`.
pub fn run(a: &FitArgs, g: &Globals) -> Result<()> {
    // the model and the trace may replace neither an input nor each other (checked before the
    // fit, not after it)
    let inputs: Vec<&Path> = [
        a.target.as_deref().map(Path::new),
        a.triplets.as_deref(),
        a.row_features.as_deref().map(Path::new),
        a.col_features.as_deref().map(Path::new),
    ]
    .into_iter()
    .flatten()
    .collect();
    check_outputs(g, &[Some(&a.out), a.trace.as_deref()], &inputs)?;
    #[cfg(feature = "mpi")]
    if a.mpi {
        return crate::mpi_fit::run(a, g);
    }
    if a.method == "auto" && a.triplets.is_none() {
        return crate::auto::run(a, g);
    }
    // a completion fit (--triplets) learns GIMC-LFF unless told otherwise
    let method = if a.method == "auto" {
        "gimc-lff"
    } else {
        a.method.as_str()
    };
    let (family, learn) = map_method(method, &g.registry)?;
    if !a.families.is_empty() {
        bail!(
            "--families narrows `--method auto`; --method {} fixes the map",
            a.method
        );
    }
    let gammas = if a.gamma.is_empty() {
        vec![Gamma::SCALE]
    } else {
        a.gamma.clone()
    };
    let lambdas = if a.lambda.is_empty() {
        vec![1.0]
    } else {
        a.lambda.clone()
    };
    let ms = if a.m.is_empty() {
        vec![500]
    } else {
        a.m.clone()
    };
    let normalize_mode = a.normalize.unwrap_or(Normalize::None);
    let select_k = a.select_k.unwrap_or(1);
    if let (Some(t), Some(r), Some(c)) = (&a.triplets, &a.row_features, &a.col_features) {
        if a.standardize == Standardize::On {
            bail!("--standardize on: completion fits (--triplets) do not standardise features");
        }
        if normalize_mode != Normalize::None {
            bail!("--normalize: completion fits (--triplets) do not normalise rows");
        }
        let pick = |v: &[f64], what: &str| -> Result<f64> {
            match v {
                [x] => Ok(*x),
                _ => bail!("--{what}: a completion fit takes one value (no grid)"),
            }
        };
        let gamma = match gammas.as_slice() {
            [g] => *g,
            _ => bail!("--gamma: a completion fit takes one value (no grid)"),
        };
        let m = match ms.as_slice() {
            [m] => *m,
            _ => bail!("--m: a completion fit takes one value (no grid)"),
        };
        let ca = crate::completion::CompletionArgs {
            triplets: t,
            row_features: r,
            col_features: c,
            family,
            learn,
            m,
            gamma,
            lambda: pick(&lambdas, "lambda")?,
            iters: a.iters,
            rank: a.rank,
            out: &a.out,
        };
        return crate::completion::fit(&ca, method, g);
    }
    let mut ds = load_target(a.target.as_deref(), &a.part, g)?;
    let name = ds.name.clone();
    let standardizer = standardize(&mut ds, a.standardize)?;
    let row_norm = normalize(&mut ds, normalize_mode);
    let data = label_data(ds)?;
    g.info(&format!(
        "fitting {} on {name}: {} rows, {} features, {} {}",
        a.method,
        data.nrows(),
        data.features().ncols(),
        data.n_labels(),
        if data.task() == Task::MultiLabel {
            "labels"
        } else {
            "classes"
        }
    ));
    let budget = memory_budget()?;
    let mut params = SelectionParams::default()
        .with_gammas(gammas)
        .with_lambdas(lambdas)
        .with_ms(ms)
        .with_max_iter(if learn { a.iters } else { 0 })
        .with_validation_fraction(a.validation)
        .with_select_k(select_k)
        .with_seed(g.seed)
        .with_memory(budget)
        .with_line_search(gimc::LineSearchParams::default().with_max_relative_step(a.max_step))
        .with_proximal(a.proximal)
        .with_patience(a.patience);
    let streamed = Storage::Streamed {
        block_rows: a.block_rows,
        precision: a.precision,
    };
    let asked = a.precision == Precision::F32 || a.block_rows > 0;
    params.storage = match a.stream {
        Stream::Off if asked => {
            bail!("--precision f32 and --block-rows need the streamed path (--stream on or auto)")
        }
        Stream::On => streamed,
        Stream::Auto if asked => streamed,
        Stream::Off => Storage::Whole,
        Stream::Auto => {
            let storage = gimc::auto_storage(&data, family, &params, budget, streamed)?;
            if storage.is_streamed() {
                g.info("the whole features would not fit the memory available: streaming them in row blocks");
            }
            storage
        }
    };
    preflight(
        g,
        &estimate_selection(&data, family, &params)?,
        budget,
        "--m",
    )?;
    let mut progress = FitProgress::new(g, &a.method);
    let sel = params
        .check()
        .and_then(|params| select_and_fit_observed(&data, family, &params, &mut progress));
    progress.finish();
    let mut sel = sel?;
    sel.model.set_method(a.method.clone());
    crate::common::record_label_columns(&mut sel.model, g);
    let preprocess = Preprocess {
        standardizer,
        row_norm,
        ..Preprocess::default()
    };
    gimc::persist::save_label_model_with_preprocess(&sel.model, &preprocess, &a.out)
        .with_context(|| format!("saving the model to {}", a.out.display()))?;
    let standardizer = preprocess.standardizer;
    if let Some(t) = &a.trace {
        // validation scores per iteration of the chosen setting in the selection fit (the
        // refit on all rows has no held-out part)
        let val_scores: &[f64] = sel
            .candidates
            .iter()
            .find(|c| {
                (c.m, c.gamma, c.lambda) == (sel.chosen.m, sel.chosen.gamma, sel.chosen.lambda)
            })
            .map(|c| c.scores.as_slice())
            .unwrap_or(&[]);
        write_trace(t, &sel.history, val_scores, data.task(), select_k)?;
    }
    let best_val = sel.chosen.validation_score;
    let metric = if data.task() == Task::MultiLabel {
        format!("P@{select_k}")
    } else {
        "accuracy".to_string()
    };
    if g.json {
        // how the features were standardised: null (not), "center-scale" or "scale" (sparse)
        let standardized = standardizer
            .as_ref()
            .map(|st| if st.center { "center-scale" } else { "scale" });
        let v = json!({
            "model": a.out.display().to_string(),
            "method": a.method,
            "task": data.task().name(),
            "rows": data.nrows(),
            "features": data.features().ncols(),
            "labels": data.n_labels(),
            "chosen": sel.chosen.describe(),
            "standardized": standardized,
            "normalized": (row_norm != RowNorm::None).then(|| row_norm.name()),
            "streamed": params.storage.is_streamed(),
            "precision": params.storage.precision().name(),
            "validation_metric": metric,
            "validation_score": if best_val.is_finite() { Some(best_val) } else { None },
            "iterations": sel.history.len().saturating_sub(1),
        });
        write_output(None, &format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        let mut s = format!(
            "fitted {} ({}) on {name}: {} rows × {} features, {} {}\nchosen: {}\n",
            a.method,
            data.task().name(),
            data.nrows(),
            data.features().ncols(),
            data.n_labels(),
            if data.task() == Task::MultiLabel {
                "labels"
            } else {
                "classes"
            },
            sel.chosen.describe()
        );
        if best_val.is_finite() {
            s.push_str(&format!("validation {metric}: {:.4}\n", best_val));
        }
        if let Some(st) = &standardizer {
            s.push_str(if st.center {
                "features standardised (training mean and standard deviation, stored in the model)\n"
            } else {
                "features scaled (training standard deviation, stored in the model)\n"
            });
        }
        if row_norm != RowNorm::None {
            s.push_str(&format!(
                "rows normalised ({}, stored in the model)\n",
                row_norm.name()
            ));
        }
        s.push_str(&format!("model saved to {}\n", a.out.display()));
        write_output(None, &s)?;
    }
    Ok(())
}

/// Writes the refit's per-iteration trace; `validation_metric` is the selection fit's
/// validation score after the same number of iterations.
fn write_trace(
    path: &Path,
    history: &[IterationInfo],
    val_scores: &[f64],
    task: Task,
    k: usize,
) -> Result<()> {
    let metric = |e: &Option<gimc::Evaluation>| e.as_ref().and_then(|e| e.score(task, k));
    let val = |h: &IterationInfo| metric(&h.validation).or(val_scores.get(h.iteration).copied());
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let s = if is_json {
        let rows: Vec<_> = history
            .iter()
            .map(|h| {
                json!({
                    "iteration": h.iteration,
                    "objective": h.objective,
                    "step": h.step,
                    "seconds": h.seconds,
                    "train_metric": metric(&h.train),
                    "validation_metric": val(h),
                })
            })
            .collect();
        format!("{}\n", serde_json::to_string_pretty(&rows)?)
    } else {
        let opt = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
        let mut s =
            String::from("iteration,objective,step,seconds,train_metric,validation_metric\n");
        for h in history {
            s.push_str(&format!(
                "{},{},{},{},{},{}\n",
                h.iteration,
                h.objective,
                opt(h.step),
                h.seconds,
                opt(metric(&h.train)),
                opt(val(h))
            ));
        }
        s
    };
    write_output(Some(path), &s)
}
