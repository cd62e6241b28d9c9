//! The open map API above the fitting loops: how a map is stored in a model file
//! ([`MapCodec`], [`MapRecord`]), the object-safe [`AnyMap`] every stored map is seen through,
//! and the [`MapRegistry`] that names map families (for model selection and the command line)
//! and map codecs (for model files).
//!
//! The built-in maps go through exactly this mechanism: random Fourier features
//! (`random-fourier`), random-phase Fourier features (`random-cosine`) and Nyström features
//! (`nystrom`) implement [`MapCodec`] here, and [`MapRegistry::builtin`] registers them with
//! the families `lff`, `lff-phase`, `lnys`, `nys-whiten` and `nys-kmeans`. A user's map
//! registers the same way and then works everywhere a built-in one does; a model file naming a
//! kind that is not registered is an error saying so.
//!
//! ```
//! use gimc::{MapRegistry, MapRecord, MapCodec};
//! use gimc_featmap::{FeatureMap, MapFamily, FourierFamily};
//! use gimc_linalg::FeatureMatrix;
//! use gimc_linalg::rng::{gaussian_mat, seeded};
//!
//! let registry = MapRegistry::builtin();
//! let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 20, 3, 1.0))?;
//! // a family by name, as model selection and `gimc fit --method gimc-lff` use it
//! let map = registry.family("lff")?.build(&x, 8, 0.5, &mut seeded(2))?;
//! assert_eq!(map.output_dim(), 16);
//! // the map's record (kind, tensors, JSON metadata) decodes back to the same map
//! let record: MapRecord = map.encode()?;
//! assert_eq!(record.kind, "random-fourier");
//! let back = registry.decode(&record)?;
//! assert_eq!(back.forward(&x)?, map.forward(&x)?);
//! // the typed map of a built-in family encodes the same way
//! let typed = FourierFamily.build(&x, 8, 0.5, &mut seeded(2))?;
//! assert_eq!(MapCodec::encode(&typed)?.kind, record.kind);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use gimc_featmap::{
    Constant, CosineFamily, FeatureMap, FourierFamily, Identity, LearnableMap, MapFamily, Nystrom,
    NystromFamily, RandomCosine, RandomFourier,
};
use gimc_linalg::faer::{Mat, MatRef};
use gimc_linalg::rng::GimcRng;
use gimc_linalg::{FeatureMatrix, Kernel};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map as JsonMap, Value};

use crate::error::param_err;
use crate::error::{GimcError, Result};

/// A map as a model file stores it: its registered kind, its input and output dimensions, its
/// tensors (part name → matrix; the file names them `<prefix>.<part>`) and its JSON metadata
/// (the fields beside `kind`, `prefix`, `input_dim` and `output_dim` in the file's map entry).
#[derive(Debug, Clone, PartialEq)]
pub struct MapRecord {
    /// The registered kind (the codec's [`MapCodec::KIND`]).
    pub kind: String,
    /// Input dimension d.
    pub input_dim: usize,
    /// Output dimension D.
    pub output_dim: usize,
    /// Kind-specific metadata (e.g. `m`, the kernel), a JSON object.
    pub metadata: JsonMap<String, Value>,
    /// The map's matrices by part name (part names are non-empty and contain no `.`).
    pub tensors: BTreeMap<String, Mat<f64>>,
}

impl MapRecord {
    /// An empty record of `kind` for a map R^input_dim → R^output_dim.
    pub fn new(kind: impl Into<String>, input_dim: usize, output_dim: usize) -> Self {
        Self {
            kind: kind.into(),
            input_dim,
            output_dim,
            metadata: JsonMap::new(),
            tensors: BTreeMap::new(),
        }
    }

    /// Adds the tensor `part` (a copy of `m`).
    pub fn with_tensor(mut self, part: &str, m: MatRef<'_, f64>) -> Self {
        self.tensors.insert(part.to_string(), m.to_owned());
        self
    }

    /// Adds the metadata field `key` (any serialisable value).
    pub fn with_meta(mut self, key: &str, value: impl Serialize) -> Result<Self> {
        let v = serde_json::to_value(value).map_err(|e| GimcError::InvalidInput {
            what: "map metadata",
            reason: format!("field {key}: {e}"),
        })?;
        self.metadata.insert(key.to_string(), v);
        Ok(self)
    }

    /// The tensor `part`, which must have shape `shape`.
    pub fn tensor(&self, part: &str, shape: (usize, usize)) -> Result<&Mat<f64>> {
        let t = self.optional_tensor(part, shape)?;
        t.ok_or_else(|| self.bad(format!("tensor {part} is missing")))
    }

    /// The tensor `part` if present, which must then have shape `shape`.
    pub fn optional_tensor(&self, part: &str, shape: (usize, usize)) -> Result<Option<&Mat<f64>>> {
        match self.tensors.get(part) {
            None => Ok(None),
            Some(t) if t.shape() == shape => Ok(Some(t)),
            Some(t) => Err(self.bad(format!(
                "tensor {part} has shape {} x {}, expected {} x {}",
                t.nrows(),
                t.ncols(),
                shape.0,
                shape.1
            ))),
        }
    }

    /// The metadata field `key`, deserialised.
    pub fn meta<T: DeserializeOwned>(&self, key: &str) -> Result<T> {
        let v = self
            .metadata
            .get(key)
            .ok_or_else(|| self.bad(format!("metadata field {key} is missing")))?;
        serde_json::from_value(v.clone())
            .map_err(|e| self.bad(format!("metadata field {key}: {e}")))
    }

    /// An error about this record.
    pub fn bad(&self, reason: impl Into<String>) -> GimcError {
        GimcError::InvalidInput {
            what: "map record",
            reason: format!("{} map: {}", self.kind, reason.into()),
        }
    }

    /// Checks that a decoded map has the record's dimensions.
    fn check_dims(&self, map: &dyn AnyMap) -> Result<()> {
        if map.input_dim() != self.input_dim || map.output_dim() != self.output_dim {
            return Err(self.bad(format!(
                "decodes to a map {} -> {}, but the record says {} -> {}",
                map.input_dim(),
                map.output_dim(),
                self.input_dim,
                self.output_dim
            )));
        }
        Ok(())
    }
}

/// How a learnable map is written to and read from a model file: a registered kind name, its
/// tensors and JSON metadata ([`MapRecord`]). Implement it for your map and register it with
/// [`MapRegistry::register_codec`]; model files then store and load it like a built-in map.
pub trait MapCodec: LearnableMap + fmt::Debug + Send + Sync + Sized + 'static {
    /// The kind name stored in model files (e.g. `random-fourier`); unique in a registry.
    const KIND: &'static str;

    /// The map's record: kind [`Self::KIND`], dimensions, every tensor needed to rebuild it
    /// and its metadata.
    fn encode(&self) -> Result<MapRecord>;

    /// Rebuilds the map from its record (errors, never panics, on missing or inconsistent
    /// parts).
    fn decode(record: &MapRecord) -> Result<Self>;
}

/// A learnable map of any registered kind, as fitted models built from a [`MapRegistry`] hold
/// it ([`BoxedMap`]). Every [`MapCodec`] is one.
pub trait AnyMap: LearnableMap + fmt::Debug + Send + Sync {
    /// The registered kind name.
    fn kind(&self) -> &str;
    /// The map's record (see [`MapCodec::encode`]).
    fn encode(&self) -> Result<MapRecord>;
}

impl<T: MapCodec> AnyMap for T {
    fn kind(&self) -> &str {
        T::KIND
    }
    fn encode(&self) -> Result<MapRecord> {
        MapCodec::encode(self)
    }
}

/// A boxed map of any registered kind.
pub type BoxedMap = Box<dyn AnyMap>;

impl AnyMap for BoxedMap {
    fn kind(&self) -> &str {
        (**self).kind()
    }
    fn encode(&self) -> Result<MapRecord> {
        (**self).encode()
    }
}

/// A map family whose maps are boxed: what a [`MapRegistry`] holds.
pub type DynFamily = dyn MapFamily<Map = BoxedMap> + Send + Sync;

/// Adapts a family with a concrete map type to one that builds [`BoxedMap`]s.
#[derive(Debug, Clone)]
pub struct BoxedFamily<F>(pub F);

impl<F> MapFamily for BoxedFamily<F>
where
    F: MapFamily,
    F::Map: AnyMap + 'static,
{
    type Map = BoxedMap;
    fn name(&self) -> &str {
        self.0.name()
    }
    fn output_dim(&self, m: usize) -> gimc_featmap::Result<usize> {
        self.0.output_dim(m)
    }
    fn build(
        &self,
        x: &FeatureMatrix,
        m: usize,
        gamma: f64,
        rng: &mut GimcRng,
    ) -> gimc_featmap::Result<BoxedMap> {
        Ok(Box::new(self.0.build(x, m, gamma, rng)?))
    }
}

type Decoder = fn(&MapRecord) -> Result<BoxedMap>;

fn decode_boxed<T: MapCodec>(record: &MapRecord) -> Result<BoxedMap> {
    Ok(Box::new(T::decode(record)?))
}

/// The named map families (model selection, `gimc fit --method gimc-NAME`) and map codecs
/// (model files) in use. [`MapRegistry::builtin`] (also [`Default`]) holds the built-in ones;
/// add your own with [`MapRegistry::register_family`] and [`MapRegistry::register_codec`].
#[derive(Clone)]
pub struct MapRegistry {
    families: BTreeMap<String, Arc<DynFamily>>,
    decoders: BTreeMap<&'static str, Decoder>,
}

impl fmt::Debug for MapRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MapRegistry")
            .field("families", &self.families.keys().collect::<Vec<_>>())
            .field("codecs", &self.decoders.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for MapRegistry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl MapRegistry {
    /// A registry with no family and no codec.
    pub fn empty() -> Self {
        Self {
            families: BTreeMap::new(),
            decoders: BTreeMap::new(),
        }
    }

    /// The built-in families `lff` ([`FourierFamily`]), `lff-phase` ([`CosineFamily`]),
    /// `lnys` (the paper's learned Nyström: uniform landmarks, M = I), `nys-whiten` (uniform
    /// landmarks, whitening M) and `nys-kmeans` (k-means landmarks, whitening M), and the
    /// codecs `random-fourier`, `random-cosine` and `nystrom`.
    pub fn builtin() -> Self {
        let mut r = Self::empty();
        let builtins = [
            Arc::new(BoxedFamily(FourierFamily)) as Arc<DynFamily>,
            Arc::new(BoxedFamily(CosineFamily)),
            Arc::new(BoxedFamily(NystromFamily::default())),
            Arc::new(BoxedFamily(NystromFamily::uniform_whitened())),
            Arc::new(BoxedFamily(NystromFamily::kmeans_whitened())),
        ];
        for f in builtins {
            r.families.insert(f.name().to_string(), f);
        }
        r.decoders
            .insert(RandomFourier::KIND, decode_boxed::<RandomFourier>);
        r.decoders
            .insert(RandomCosine::KIND, decode_boxed::<RandomCosine>);
        r.decoders.insert(Nystrom::KIND, decode_boxed::<Nystrom>);
        r.decoders.insert(Identity::KIND, decode_boxed::<Identity>);
        r.decoders.insert(Constant::KIND, decode_boxed::<Constant>);
        r
    }

    /// Registers a map family under its [`MapFamily::name`]. Errors if the name is empty,
    /// contains whitespace or is taken.
    pub fn register_family<F>(&mut self, family: F) -> Result<()>
    where
        F: MapFamily + Send + Sync + 'static,
        F::Map: AnyMap + 'static,
    {
        let name = family.name().to_string();
        if name.is_empty() || name.chars().any(char::is_whitespace) {
            return Err(param_err(
                "family name",
                format!("{name:?} must be non-empty without whitespace"),
            ));
        }
        if self.families.contains_key(&name) {
            return Err(param_err(
                "family name",
                format!("a family named {name:?} is already registered"),
            ));
        }
        self.families.insert(name, Arc::new(BoxedFamily(family)));
        Ok(())
    }

    /// Registers the codec of map type `T` under [`MapCodec::KIND`]. Errors if the kind is
    /// empty or taken.
    pub fn register_codec<T: MapCodec>(&mut self) -> Result<()> {
        if T::KIND.is_empty() {
            return Err(param_err("codec kind", "must be non-empty"));
        }
        if self.decoders.contains_key(T::KIND) {
            return Err(param_err(
                "codec kind",
                format!("a codec of kind {:?} is already registered", T::KIND),
            ));
        }
        self.decoders.insert(T::KIND, decode_boxed::<T>);
        Ok(())
    }

    /// The family named `name`, or an error listing the registered names.
    pub fn family(&self, name: &str) -> Result<&DynFamily> {
        self.families
            .get(name)
            .map(|f| &**f)
            .ok_or_else(|| GimcError::UnknownMap {
                what: "map family",
                name: name.to_string(),
                known: self.family_names().join(", "),
            })
    }

    /// The family and whether it is learned, of a map method's name: `gimc-NAME` learns the
    /// maps of family `NAME`, `imc-NAME` keeps their random draw; `imc-rff`, `imc-rff-phase`
    /// and `imc-nys` (also `rff`, `rff-phase`, `nys`) are the paper's names of `imc-lff`,
    /// `imc-lff-phase` and `imc-lnys`, and a bare family name is learned. The one reading of
    /// these names, shared by `gimc fit`, `gimc cluster`, `gimc complete` and Python.
    ///
    /// ```
    /// use gimc::MapRegistry;
    ///
    /// let registry = MapRegistry::builtin();
    /// let (family, learn) = registry.map_method("imc-rff")?;
    /// assert_eq!((family.name(), learn), ("lff", false));
    /// assert!(registry.map_method("gimc-laplace").is_err());
    /// # Ok::<(), gimc::GimcError>(())
    /// ```
    pub fn map_method(&self, method: &str) -> Result<(&DynFamily, bool)> {
        let alias = match method {
            "imc-rff" | "rff" => Some(("lff", false)),
            "imc-rff-phase" | "rff-phase" => Some(("lff-phase", false)),
            "imc-nys" | "nys" => Some(("lnys", false)),
            _ => None,
        };
        let (name, learn) = alias.unwrap_or_else(|| {
            if let Some(n) = method.strip_prefix("gimc-") {
                (n, true)
            } else if let Some(n) = method.strip_prefix("imc-") {
                (n, false)
            } else {
                (method, true)
            }
        });
        match self.families.get(name) {
            Some(f) => Ok((&**f, learn)),
            None => Err(GimcError::UnknownMethod {
                name: method.to_string(),
                choices: self.map_method_names().join(", "),
            }),
        }
    }

    /// The map methods [`map_method`](Self::map_method) reads, for messages: `gimc-NAME` and
    /// `imc-NAME` of every family, then the paper's names.
    pub fn map_method_names(&self) -> Vec<String> {
        let names = self.family_names();
        let learned = names.iter().map(|n| format!("gimc-{n}"));
        let fixed = names.iter().map(|n| format!("imc-{n}"));
        learned
            .chain(fixed)
            .chain(["imc-rff", "imc-rff-phase", "imc-nys"].map(String::from))
            .collect()
    }

    /// The registered family names, sorted.
    pub fn family_names(&self) -> Vec<&str> {
        self.families.keys().map(String::as_str).collect()
    }

    /// The registered codec kinds, sorted.
    pub fn codec_kinds(&self) -> Vec<&'static str> {
        self.decoders.keys().copied().collect()
    }

    /// Rebuilds a map from its record with the codec registered for `record.kind` (an error
    /// naming the kind and the registered ones if there is none), and checks its dimensions.
    pub fn decode(&self, record: &MapRecord) -> Result<BoxedMap> {
        let decode =
            self.decoders
                .get(record.kind.as_str())
                .ok_or_else(|| GimcError::UnknownMap {
                    what: "map kind",
                    name: record.kind.clone(),
                    known: self.codec_kinds().join(", "),
                })?;
        let map = decode(record)?;
        record.check_dims(&*map)?;
        Ok(map)
    }
}

/// A kernel in map metadata.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum KernelMeta {
    /// exp(−γ‖x − y‖²).
    Rbf {
        /// γ.
        gamma: f64,
    },
    /// x·y.
    Linear,
    /// (γ x·y + c₀)^degree.
    Polynomial {
        /// γ.
        gamma: f64,
        /// c₀.
        coef0: f64,
        /// Degree.
        degree: u32,
    },
}

impl KernelMeta {
    /// The metadata of a kernel (errors for kernels with no representation).
    pub fn of(k: Kernel) -> Result<Self> {
        match k {
            Kernel::Rbf { gamma } => Ok(Self::Rbf { gamma }),
            Kernel::Linear => Ok(Self::Linear),
            Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            } => Ok(Self::Polynomial {
                gamma,
                coef0,
                degree,
            }),
            other => Err(GimcError::InvalidInput {
                what: "map to save",
                reason: format!("kernel {other:?} has no model-file representation"),
            }),
        }
    }

    /// The kernel.
    pub fn kernel(self) -> Kernel {
        match self {
            Self::Rbf { gamma } => Kernel::Rbf { gamma },
            Self::Linear => Kernel::Linear,
            Self::Polynomial {
                gamma,
                coef0,
                degree,
            } => Kernel::Polynomial {
                gamma,
                coef0,
                degree,
            },
        }
    }
}

/// Random Fourier features: tensor `directions` (d × m, column r = u_r), metadata `m`;
/// Φ = m^{-1/2}[cos XU, sin XU].
impl MapCodec for RandomFourier {
    const KIND: &'static str = "random-fourier";

    fn encode(&self) -> Result<MapRecord> {
        MapRecord::new(Self::KIND, self.input_dim(), self.output_dim())
            .with_tensor("directions", self.directions())
            .with_meta("m", self.n_directions())
    }

    fn decode(r: &MapRecord) -> Result<Self> {
        let m: usize = r.meta("m")?;
        if m == 0 || r.output_dim != 2 * m {
            return Err(r.bad("output_dim must be 2m >= 2"));
        }
        let u = r.tensor("directions", (r.input_dim, m))?;
        Ok(RandomFourier::from_directions(u.clone())?)
    }
}

/// The identity map Φ = X (plain IMC on the raw features): no tensors, `input_dim` =
/// `output_dim` = d.
impl MapCodec for Identity {
    const KIND: &'static str = "identity";

    fn encode(&self) -> Result<MapRecord> {
        Ok(MapRecord::new(
            Self::KIND,
            self.input_dim(),
            self.output_dim(),
        ))
    }

    fn decode(r: &MapRecord) -> Result<Self> {
        if r.input_dim == 0 || r.output_dim != r.input_dim {
            return Err(r.bad("output_dim must equal input_dim >= 1"));
        }
        Ok(Identity::new(r.input_dim))
    }
}

/// The constant map Φ = 1 (an intercept): no tensors, `output_dim` = 1.
impl MapCodec for Constant {
    const KIND: &'static str = "constant";

    fn encode(&self) -> Result<MapRecord> {
        Ok(MapRecord::new(Self::KIND, self.input_dim(), 1))
    }

    fn decode(r: &MapRecord) -> Result<Self> {
        if r.input_dim == 0 || r.output_dim != 1 {
            return Err(r.bad("output_dim must be 1 and input_dim >= 1"));
        }
        Ok(Constant::new(r.input_dim))
    }
}

/// Random-phase Fourier features: tensors `directions` (d × D) and `phases` (1 × D);
/// Φ = √(2/D) cos(XU + 1bᵀ).
impl MapCodec for RandomCosine {
    const KIND: &'static str = "random-cosine";

    fn encode(&self) -> Result<MapRecord> {
        let b = self.phases();
        Ok(
            MapRecord::new(Self::KIND, self.input_dim(), self.output_dim())
                .with_tensor("directions", self.directions())
                .with_tensor("phases", MatRef::from_row_major_slice(b, 1, b.len())),
        )
    }

    fn decode(r: &MapRecord) -> Result<Self> {
        let d = r.output_dim;
        if d == 0 {
            return Err(r.bad("output_dim must be >= 1"));
        }
        let u = r.tensor("directions", (r.input_dim, d))?;
        let b = r.tensor("phases", (1, d))?;
        let phases = (0..d).map(|j| b[(0, j)]).collect();
        Ok(RandomCosine::from_parts(u.clone(), phases)?)
    }
}

/// Nyström features: tensors `landmarks` (m × d) and, when `normalized`, `normalization`
/// (m × m); metadata `m`, `kernel` and `normalized`; Φ = k(X, U)·M (M = I when absent).
impl MapCodec for Nystrom {
    const KIND: &'static str = "nystrom";

    fn encode(&self) -> Result<MapRecord> {
        let mut r = MapRecord::new(Self::KIND, self.input_dim(), self.output_dim())
            .with_tensor("landmarks", self.landmarks())
            .with_meta("m", self.output_dim())?
            .with_meta("kernel", KernelMeta::of(self.kernel())?)?
            .with_meta("normalized", self.normalization().is_some())?;
        if let Some(m) = self.normalization() {
            r = r.with_tensor("normalization", m);
        }
        Ok(r)
    }

    fn decode(r: &MapRecord) -> Result<Self> {
        let m: usize = r.meta("m")?;
        if m == 0 || r.output_dim != m {
            return Err(r.bad("output_dim must be m >= 1"));
        }
        let kernel: KernelMeta = r.meta("kernel")?;
        let normalized: bool = r.meta("normalized")?;
        let landmarks = r.tensor("landmarks", (m, r.input_dim))?;
        let norm = match (normalized, r.optional_tensor("normalization", (m, m))?) {
            (true, Some(n)) => Some(n.clone()),
            (false, None) => None,
            (true, None) => return Err(r.bad("normalized, but tensor normalization is missing")),
            (false, Some(_)) => {
                return Err(r.bad("not normalized, but a normalization tensor is stored"));
            }
        };
        Ok(Nystrom::from_parts(
            kernel.kernel(),
            landmarks.clone(),
            norm,
        )?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gimc_linalg::rng::{gaussian_mat, seeded};

    #[test]
    fn builtin_maps_round_trip_through_their_records() {
        let reg = MapRegistry::builtin();
        assert_eq!(
            reg.family_names(),
            ["lff", "lff-phase", "lnys", "nys-kmeans", "nys-whiten"]
        );
        assert_eq!(
            reg.codec_kinds(),
            [
                "constant",
                "identity",
                "nystrom",
                "random-cosine",
                "random-fourier"
            ]
        );
        // the identity (plain IMC's maps) and the constant (an intercept) have no family but
        // decode
        let id: BoxedMap = Box::new(Identity::new(4));
        let back = reg.decode(&id.encode().unwrap()).unwrap();
        assert_eq!((back.input_dim(), back.output_dim()), (4, 4));
        assert_eq!(back.kind(), "identity");
        let one: BoxedMap = Box::new(Constant::new(4));
        let back = reg.decode(&one.encode().unwrap()).unwrap();
        assert_eq!((back.input_dim(), back.output_dim()), (4, 1));
        assert_eq!(back.kind(), "constant");
        let mut bad = one.encode().unwrap();
        bad.output_dim = 2;
        assert!(reg.decode(&bad).is_err());
        let x = FeatureMatrix::dense(gaussian_mat(&mut seeded(1), 30, 4, 1.0)).unwrap();
        for name in reg.family_names() {
            let map = reg
                .family(name)
                .unwrap()
                .build(&x, 5, 0.5, &mut seeded(2))
                .unwrap();
            let rec = map.encode().unwrap();
            assert_eq!(rec.kind, map.kind());
            let back = reg.decode(&rec).unwrap();
            assert_eq!(back.params(), map.params(), "{name}");
            assert_eq!(
                back.forward(&x).unwrap(),
                map.forward(&x).unwrap(),
                "{name}"
            );
        }
        // unknown names and kinds are errors that list what is registered
        let Err(e) = reg.family("nope") else {
            panic!("an unknown family must be an error")
        };
        let e = e.to_string();
        assert!(e.contains("nope") && e.contains("lff-phase"), "{e}");
        let rec = MapRecord::new("laplace", 4, 8);
        let e = reg.decode(&rec).unwrap_err().to_string();
        assert!(e.contains("laplace") && e.contains("random-fourier"), "{e}");
        // duplicates are refused
        let mut reg = reg;
        assert!(reg.register_codec::<Nystrom>().is_err());
        assert!(reg.register_family(FourierFamily).is_err());
        // a record whose dimensions disagree with its tensors is refused
        let map = reg
            .family("lff")
            .unwrap()
            .build(&x, 5, 0.5, &mut seeded(2))
            .unwrap();
        let mut rec = map.encode().unwrap();
        rec.input_dim = 3;
        assert!(reg.decode(&rec).is_err());
        let mut rec = map.encode().unwrap();
        rec.metadata.remove("m");
        assert!(reg.decode(&rec).is_err());
    }
}
