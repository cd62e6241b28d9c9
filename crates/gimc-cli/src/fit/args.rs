//! The arguments of `gimc fit`, and the storage of Φ they ask for.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use gimc::{Gamma, Precision, Storage};

use crate::common::{Normalize, Standardize};

/// Arguments of `gimc fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// Training data: a file (ARFF / Mulan pair, LIBSVM, XMC, CSV with --label-column) or a set
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
    /// imc-lff-phase and imc-lnys. ridge, rrr (reduced-rank regression, --rank), logistic and
    /// svm (one model per label or class, C = 1/λ) fit a linear model on the rows themselves,
    /// --lambda (or --rank) chosen on the validation split.
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
    /// `F*scale`. The γ used is stored in the model. Default: `scale`; `auto` walks
    /// 0.0625*scale, 0.25*scale, scale, 4*scale and 16*scale from scale.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub gamma: Vec<Gamma>,
    /// Ridge penalty λ (comma list = grid). Default 1; `auto` searches 0.001, 0.01, 0.1, 1 and 10,
    /// each block's penalty scaled by its mean squared row norm; the linear methods 0.1, 1, 10,
    /// 100 and 1000.
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
    pub lambda: Vec<f64>,
    /// Maximum outer iterations of the map learning (chosen on validation, ≤ this).
    #[arg(long, default_value_t = 10)]
    pub iters: usize,
    /// Stop each setting's map learning once its validation score has not beaten its best for
    /// this many outer iterations (≥ 1); default: 2 for `auto` (its mean over the folds), and
    /// every setting of the other methods runs to --iters.
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
    /// Refused: general completion is `gimc complete` (the error names the equivalent
    /// command).
    #[arg(long, value_name = "FILE", hide = true)]
    pub triplets: Option<PathBuf>,
    /// Refused, as --triplets.
    #[arg(long, value_name = "DATA", hide = true)]
    pub row_features: Option<String>,
    /// Refused, as --triplets.
    #[arg(long, value_name = "DATA", hide = true)]
    pub col_features: Option<String>,
    /// Rank of `--method rrr` (comma list = grid, each capped at min(features, labels);
    /// default 16,64,256).
    #[arg(long, value_delimiter = ',')]
    pub rank: Vec<usize>,
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
    /// Run as one process of a data-parallel fit under `mpirun`; process 0 writes the model.
    /// `auto` searches on a sample of every process's rows and refits on all of them; a named
    /// --method fits one setting (--iters iterations, no validation split). Each process reads
    /// its shard of an XC-format file, or the file with `{rank}` replaced by its rank.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub mpi: bool,
    /// With --mpi and `auto`: the rows drawn from every process's shard that the search
    /// selects on (all of them when there are no more) [default: 20000].
    #[cfg(feature = "mpi")]
    #[arg(long, value_name = "ROWS", requires = "mpi")]
    pub sample_rows: Option<usize>,
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

impl FitArgs {
    /// How Φ is held (`--stream`, `--block-rows`, `--precision`): `auto_storage` decides
    /// `--stream auto` when neither of the others asks for streaming; `refusal` is the error of
    /// `--stream off` with either of them.
    pub fn storage(
        &self,
        refusal: &str,
        auto_storage: impl FnOnce(Storage) -> Result<Storage>,
    ) -> Result<Storage> {
        let streamed = Storage::Streamed {
            block_rows: self.block_rows,
            precision: self.precision,
        };
        let asked = self.precision == Precision::F32 || self.block_rows > 0;
        Ok(match self.stream {
            Stream::Off if asked => bail!("{refusal}"),
            Stream::On => streamed,
            Stream::Auto if asked => streamed,
            Stream::Off => Storage::Whole,
            Stream::Auto => auto_storage(streamed)?,
        })
    }
}
