//! Features of several maps side by side (the combined LFF + LNYS features of DESIGN §3.3).
//! The maps themselves come from `gimc-featmap` and are drawn through a
//! [`gimc_featmap::MapFamily`]; see [`crate::registry`] for the open map API.

use gimc_featmap::FeatureMap;
use gimc_linalg::FeatureMatrix;
use gimc_linalg::faer::Mat;

use crate::error::Result;

/// Φ = [φ_1(X), φ_2(X), …] (n × Σ D_i): the features of several maps side by side (the
/// combined LFF + LNYS features of DESIGN §3.3). One map gives its own forward pass.
pub fn concat_features<M: FeatureMap>(maps: &[M], x: &FeatureMatrix) -> Result<Mat<f64>> {
    match maps {
        [] => Err(crate::error::GimcError::Empty("feature maps")),
        [one] => Ok(one.forward(x)?),
        many => {
            let total: usize = many.iter().map(FeatureMap::output_dim).sum();
            let mut out = Mat::<f64>::zeros(x.nrows(), total);
            let mut col = 0;
            for m in many {
                let phi = m.forward(x)?;
                let d = phi.ncols();
                out.as_mut()
                    .submatrix_mut(0, col, x.nrows(), d)
                    .copy_from(&phi);
                col += d;
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_featmap::{FourierFamily, MapFamily, NystromFamily};
    use gimc_linalg::rng::{gaussian_mat, seeded};

    #[test]
    fn concatenated_features_keep_each_map_in_order() {
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 30, 4, 1.0)).unwrap();
        let f = FourierFamily.build(&x, 7, 0.5, &mut seeded(2)).unwrap();
        let n = NystromFamily::default()
            .build(&x, 5, 0.5, &mut seeded(2))
            .unwrap();
        let maps: [&dyn FeatureMap; 2] = [&f, &n];
        let both = concat_features(&maps, &x).unwrap();
        assert_eq!(both.shape(), (30, 19));
        let pf = f.forward(&x).unwrap();
        assert_eq!(both.as_ref().subcols(0, 14), pf.as_ref());
        let pn = n.forward(&x).unwrap();
        assert_eq!(both.as_ref().subcols(14, 5), pn.as_ref());
        assert!(concat_features::<&dyn FeatureMap>(&[], &x).is_err());
    }
}
