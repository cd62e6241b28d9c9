//! One module per reproduced table or figure (DESIGN §4).

pub mod datasets;
pub mod gimc_fig1;
pub mod gimc_fig2;
pub mod gimc_multiclass;
pub mod gimc_table2;
pub mod gimc_table2_extended;
pub mod gimc_table3;
pub mod imc_sample_complexity;
pub mod mc1_common;
pub mod mc1_emotions;
pub mod mc1_synthetic;
pub mod mc1_yeast;
pub mod okmf_scaling;
pub mod okmf_table2;
pub mod pu_imc;
mod support;
