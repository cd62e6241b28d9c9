//! The consistency checks of a stored input transform, shared by saving and loading.

use gimc_linalg::{Preprocess, Standardizer};

/// Checks a standardisation's own consistency: equally long vectors, every value finite,
/// scales > 0, and an all-zero mean when it does not centre.
pub(super) fn check_standardizer(st: &Standardizer) -> std::result::Result<(), String> {
    if st.mean.len() != st.scale.len() {
        return Err(format!(
            "{} means but {} scales",
            st.mean.len(),
            st.scale.len()
        ));
    }
    if let Some(j) = st.mean.iter().position(|v| !v.is_finite()) {
        return Err(format!("mean {j} is not finite ({})", st.mean[j]));
    }
    if let Some(j) = st.scale.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(format!(
            "scale {j} is not finite and positive ({})",
            st.scale[j]
        ));
    }
    if !st.center && st.mean.iter().any(|&v| v != 0.0) {
        return Err("a non-centring standardisation has a non-zero mean".into());
    }
    Ok(())
}

/// Checks the version-5 parts of an input transform for a model of input dimension `d`: kept
/// columns (with the raw input width, one per model input, strictly increasing, below the
/// width), a raw width equal to `d` without kept columns, tf-idf weights (one per model
/// input, finite, > 0) and the row scale (finite, > 0).
pub(super) fn check_v5_parts(pre: &Preprocess, d: usize) -> std::result::Result<(), String> {
    match (&pre.columns, pre.input_dim) {
        (Some(_), None) => {
            return Err("kept input columns need the raw input width (input_dim)".into());
        }
        (Some(cols), Some(width)) => {
            if cols.len() != d {
                return Err(format!(
                    "{} kept columns for a model of input dimension {d}",
                    cols.len()
                ));
            }
            if let Some(&c) = cols.iter().find(|&&c| c >= width) {
                return Err(format!(
                    "kept column {c} is out of range for {width} input columns"
                ));
            }
            if let Some(w) = cols.windows(2).find(|w| w[0] >= w[1]) {
                return Err(format!(
                    "kept columns must be strictly increasing ({} then {})",
                    w[0], w[1]
                ));
            }
        }
        (None, Some(width)) if width != d => {
            return Err(format!(
                "raw input width {width} without kept columns, but the model's input \
                 dimension is {d}"
            ));
        }
        (None, _) => {}
    }
    if let Some(tf) = &pre.tfidf {
        if tf.idf.len() != d {
            return Err(format!(
                "{} tf-idf weights for a model of input dimension {d}",
                tf.idf.len()
            ));
        }
        if let Some(j) = tf.idf.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(format!(
                "tf-idf weight {j} is not finite and positive ({})",
                tf.idf[j]
            ));
        }
    }
    if !(pre.row_scale.is_finite() && pre.row_scale > 0.0) {
        return Err(format!(
            "the row scale must be finite and positive, got {}",
            pre.row_scale
        ));
    }
    Ok(())
}
