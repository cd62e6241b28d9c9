//! One module per reproduced table or figure (DESIGN §4).

pub mod datasets;
pub mod gimc_fig1;
pub mod imc_sample_complexity;
pub mod pu_imc;
mod support;
