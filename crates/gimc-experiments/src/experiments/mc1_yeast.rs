//! Experiment `mc1-yeast`: Table 5 of the transduction paper (Goldberg et al., NIPS 2010;
//! DESIGN §3.5, §4) on the yeast set (all 2,417 rows: Mulan train + test, 103 features, 14
//! labels): transductive label error and feature imputation error of MC-b, MC-1, FPC+SVM and
//! Mean+SVM at
//! ω ∈ {40, 60, 80} % observed feature and label entries, mean (std) over 10 trials, with the
//! published values beside ours. `--quick`: 1 trial at ω = 80 % with a coarse SVM C grid.

use super::mc1_common::{Mc1Config, Method, REAL_OMEGAS, RealSpec, run_real};
use crate::report::Report;
use crate::{Context, ExpectedTime, Experiment, ExperimentError};

/// The `mc1-yeast` experiment.
#[derive(Debug, Clone, Copy, Default)]
pub struct Mc1Yeast;

/// Methods of Table 5, in the paper's order.
pub const METHODS: [Method; 4] = [Method::McB, Method::Mc1, Method::FpcSvm, Method::MeanSvm];

/// The table's specification (ω values of the full or quick form).
pub fn spec(quick: bool) -> RealSpec {
    RealSpec {
        experiment: "mc1-yeast",
        title: "Transduction with matrix completion, Table 5: yeast",
        set: "yeast",
        parts: &["train", "test"],
        omegas: if quick {
            vec![0.8]
        } else {
            REAL_OMEGAS.to_vec()
        },
        published_label: vec![
            (Method::McB, [16.1, 12.2, 8.7]),
            (Method::Mc1, [16.7, 13.0, 8.5]),
            (Method::FpcSvm, [21.5, 20.8, 20.3]),
            (Method::MeanSvm, [21.6, 21.1, 20.5]),
        ],
        published_imputation: vec![
            (Method::McB, [0.83, 0.76, 0.73]),
            (Method::Mc1, [0.86, 0.92, 0.74]),
            (Method::FpcSvm, [0.81, 0.76, 0.72]),
        ],
        standardize: true,
    }
}

/// The configuration run by `reproduce`: 10 trials (quick: 1).
pub fn config(quick: bool) -> Mc1Config {
    Mc1Config::paper(if quick { 1 } else { 10 }, METHODS.to_vec(), quick)
}

impl Experiment for Mc1Yeast {
    fn name(&self) -> &'static str {
        "mc1-yeast"
    }

    fn description(&self) -> &'static str {
        "NIPS 2010 transduction Table 5: MC-1 / MC-b vs imputation + SVM on yeast"
    }

    fn expected_time(&self) -> ExpectedTime {
        ExpectedTime::new(1062, 11)
    }

    fn run(&self, ctx: &Context) -> Result<Report, ExperimentError> {
        run_real(&spec(ctx.quick), ctx, &config(ctx.quick))
    }
}
