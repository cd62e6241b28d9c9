//! One module per reproduced table or figure (DESIGN §4).

pub mod datasets;
