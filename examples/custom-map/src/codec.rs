//! Storing [`LaplaceFourier`] in gimc model files, and the registry that makes the map
//! selectable by name.
//!
//! A model file stores each map as a record ([`MapRecord`]): a registered kind name, the map's
//! tensors and its JSON metadata. [`MapCodec`] is the two-way conversion; registering it with
//! [`MapRegistry::register_codec`] lets `gimc::persist` load files that hold the map, and
//! registering [`LaplaceFamily`] with [`MapRegistry::register_family`] lets model selection
//! and the command line build it by its name `llff`. The built-in maps are registered the same
//! way ([`MapRegistry::builtin`]).

use gimc::{MapCodec, MapRecord, MapRegistry};
use gimc_featmap::FeatureMap;

use crate::{LaplaceFamily, LaplaceFourier};

/// Record layout: kind `laplace-fourier`; tensor `directions` (d × m, column r = u_r);
/// metadata `m` (number of directions) and `gamma` (the γ the directions were drawn for).
impl MapCodec for LaplaceFourier {
    const KIND: &'static str = "laplace-fourier";

    fn encode(&self) -> gimc::Result<MapRecord> {
        MapRecord::new(Self::KIND, self.input_dim(), self.output_dim())
            .with_tensor("directions", self.directions())
            .with_meta("m", self.n_directions())?
            .with_meta("gamma", self.gamma())
    }

    fn decode(record: &MapRecord) -> gimc::Result<Self> {
        let m: usize = record.meta("m")?;
        let gamma: f64 = record.meta("gamma")?;
        if m == 0 || record.output_dim != 2 * m {
            return Err(record.bad(format!(
                "output_dim {} must be 2m with m = {m} >= 1",
                record.output_dim
            )));
        }
        let u = record.tensor("directions", (record.input_dim, m))?;
        // from_directions checks γ and the entries, so a corrupted record is an error
        Ok(LaplaceFourier::from_directions(u.clone(), gamma)?)
    }
}

/// The built-in families and codecs plus this crate's: family `llff` ([`LaplaceFamily`]) and
/// codec `laplace-fourier` ([`LaplaceFourier`]). What the `gimc-laplace` binary runs with.
///
/// ```
/// let registry = custom_map::registry()?;
/// assert!(registry.family_names().contains(&"llff"));
/// assert!(registry.codec_kinds().contains(&"laplace-fourier"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn registry() -> gimc::Result<MapRegistry> {
    let mut registry = MapRegistry::builtin();
    registry.register_family(LaplaceFamily)?;
    registry.register_codec::<LaplaceFourier>()?;
    Ok(registry)
}
